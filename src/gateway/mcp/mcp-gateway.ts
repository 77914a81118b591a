import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Principal } from '../../auth/principal.js';
import { AppError } from '../../lib/errors.js';
import { rateHeaders, RateLimitedError, type LimitsService } from '../../limits/limits-service.js';
import type { McpDirectory, McpServerView } from '../../mcp/directory.js';
import { loadTypes } from '../../mcp/sdk.js';
import { McpUpstreamError } from '../../mcp/upstream-session.js';
import type { McpUserOAuth } from '../../mcp/user-oauth.js';
import type { McpServerRepository } from '../../storage/repositories/mcp-servers.js';
import type { Logger } from '../../telemetry/logger.js';
import { readGatewayHeaders } from '../gateway-headers.js';
import { markHandled } from '../refused-requests.js';
import { RequestLogDraft } from '../request-log-draft.js';
import type { BridgeDeps } from './bridge-server.js';
import { authorizePath, callerView } from './caller-endpoint.js';
import type { CallContext } from './tool-call.js';

// The SDK's server side (and the bridge built on it) is loaded by the first MCP call, not at start;
// after the protocol's types (sdk.ts), which checkRequest has loaded.
let serverSide:
  | Promise<[typeof import('./bridge-server.js'), typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')]>
  | undefined;
const loadServerSide = () =>
  (serverSide ??= loadTypes().then(() =>
    Promise.all([import('./bridge-server.js'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]),
  ));

export interface McpGatewayDeps extends BridgeDeps {
  directory: McpDirectory;
  limits: LimitsService;
  servers: Pick<McpServerRepository, 'touchConnection'>;
  logger: Logger;
  oauth: McpUserOAuth;
  /** The public_url setting: the base of authorization links (else the address the caller used). */
  publicUrl?: string | undefined;
}

/** What the MCP endpoint needs of fastify's request and reply. */
export interface McpHttpRequest {
  readonly id: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
  readonly principal: Principal | null;
  readonly raw: IncomingMessage;
  readonly protocol: string;
  readonly host: string;
}
export interface McpHttpReply {
  readonly raw: ServerResponse;
  hijack(): void;
  getHeaders(): Record<string, unknown>;
  headers(values: Record<string, string>): unknown;
}

type JsonRpcMessage = { method?: unknown; params?: { name?: unknown } };

/**
 * What the SDK's transport would refuse with a JSON-RPC error body of its own is refused here, in
 * svcgw's one error body: an Accept header without both answer types, a body that is not
 * JSON-RPC.
 */
async function checkRequest(request: McpHttpRequest): Promise<void> {
  const accept = String(request.headers.accept ?? '');
  if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
    throw new AppError(
      'NOT_ACCEPTABLE',
      'An MCP endpoint answers JSON or an event stream (Streamable HTTP): send Accept: application/json, text/event-stream.',
      { param: 'accept' },
    );
  const { JSONRPCMessageSchema } = await loadTypes();
  const body = request.body;
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0 || !messages.every((m) => JSONRPCMessageSchema.safeParse(m).success))
    throw new AppError('INVALID_REQUEST', 'The body is not a JSON-RPC 2.0 message (or a batch of them).', {
      param: 'body',
    });
}

const messagesOf = (body: unknown): JsonRpcMessage[] =>
  (Array.isArray(body) ? body : [body]).filter(
    (m): m is JsonRpcMessage => typeof m === 'object' && m !== null && !Array.isArray(m),
  );

/**
 * An MCP server's endpoint on the gateway (`POST /v1/mcp/{server}/mcp`), speaking MCP's
 * Streamable HTTP transport to clients without sessions: each POST gets a fresh SDK server and
 * transport (docs/mcp.md says why), bridged to the pooled upstream connection. Before any of
 * that: the server must exist in the caller's reach, its integration be shared with its
 * workspace, the key's user be allowed, and each tool call pass the rate limits.
 */
/**
 * The MCP server a caller names, if it is in the caller's reach and the caller may use it: it
 * exists (another workspace's is a 404), its integration is shared with its workspace, and the
 * key's user (or, without one, the default) is allowed.
 */
export function createMcpServerResolver(deps: { directory: McpDirectory }) {
  async function resolve(principal: Principal, ref: string): Promise<McpServerView> {
    const view = await deps.directory.find(principal.organisationId, ref);
    // Another workspace's server is answered like one that does not exist.
    if (!view || (principal.workspaceId !== null && view.server.workspace_id !== principal.workspaceId))
      throw new AppError('NOT_FOUND', `MCP server ${ref} not found.`, { param: 'server' });
    if (!view.workspaceEnabled)
      throw new AppError(
        'MCP_ACCESS_DENIED',
        `MCP server ${view.server.slug}: its integration ${view.integration.slug} is not shared with the server's workspace.`,
      );
    const override = principal.userId ? await deps.directory.userOverride(view.server.id, principal.userId) : null;
    if (!(override ?? view.server.default_user_access === 'allow'))
      throw new AppError(
        'MCP_ACCESS_DENIED',
        principal.userId
          ? `The key's user has no access to MCP server ${view.server.slug}.`
          : `MCP server ${view.server.slug} denies access by default, and this key belongs to no user who could be allowed.`,
      );
    return view;
  }

  return resolve;
}

export function createMcpGateway(deps: McpGatewayDeps) {
  const resolve = createMcpServerResolver(deps);

  /** Every tool call of the request passes the rate limits, or the request is refused (429) and its calls logged. */
  async function admit(context: CallContext, request: McpHttpRequest, reply: McpHttpReply, calls: JsonRpcMessage[]) {
    const { principal, view } = context;
    for (let i = 0; i < calls.length; i++) {
      try {
        const facts = await deps.limits.facts(principal, view.server.workspace_id, 'mcp', draftMetadata(context));
        const admission = await deps.limits.admitRate(principal, facts);
        if (admission.headers) reply.headers(rateHeaders(admission.headers, deps.clock.now()));
      } catch (error) {
        if (!(error instanceof RateLimitedError)) throw error;
        reply.headers(error.headers);
        for (const refused of calls) logRefusedCall(context, refused, error);
        markHandled(request);
        throw error;
      }
    }
  }

  function draftMetadata(context: CallContext): Record<string, string> | null {
    const keyMetadata = context.principal.defaults?.metadata;
    return keyMetadata && Object.keys(keyMetadata).length > 0
      ? { ...keyMetadata, ...context.headers.metadata }
      : context.headers.metadata;
  }

  function logRefusedCall(context: CallContext, call: JsonRpcMessage, error: AppError): void {
    const draft = new RequestLogDraft(
      context.principal,
      context.view.server.workspace_id,
      'mcp',
      'POST',
      context.path,
      context.requestId,
      deps.clock.now(),
      performance.now(),
    );
    draft.traceId = context.headers.traceId;
    draft.metadata = draftMetadata(context);
    draft.mcpServerId = context.view.server.id;
    draft.mcpTool = typeof call.params?.name === 'string' ? call.params.name : null;
    draft.errorCode = error.code;
    draft.errorMessage = error.message;
    deps.logs.enqueue(draft.finish(error.status, performance.now()));
  }

  return async function handle(request: McpHttpRequest, reply: McpHttpReply, ref: string): Promise<void> {
    const principal = request.principal!;
    const base = deps.publicUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${request.host}`;
    const view = await callerView(deps, principal, await resolve(principal, ref), base);
    await checkRequest(request);
    const headers = readGatewayHeaders(request.headers);
    const context: CallContext = {
      principal,
      view,
      requestId: request.id,
      path: request.url.split('?')[0] ?? request.url,
      headers,
      rawHeaders: request.headers,
    };
    const messages = messagesOf(request.body);
    await admit(
      context,
      request,
      reply,
      messages.filter((m) => m.method === 'tools/call'),
    );

    let session;
    try {
      session = await deps.upstreams.session(view.endpoint);
    } catch (error) {
      const failure = error instanceof McpUpstreamError ? error : null;
      if (view.endpoint.userToken && failure?.status === 401)
        throw new AppError(
          'MCP_AUTHORIZATION_REQUIRED',
          `MCP server ${view.server.slug} refused your authorization, and it could not be renewed: authorize again at ${base}${authorizePath(view.server.slug)}.`,
        );
      throw new AppError(
        failure?.status ? 'UPSTREAM_ERROR' : 'UPSTREAM_UNREACHABLE',
        failure?.message ?? `The MCP server behind ${view.server.slug} could not be reached.`,
      );
    }
    if (principal.userId && messages.some((m) => m.method === 'initialize')) {
      const stamp = new Date(deps.clock.now()).toISOString();
      deps.servers
        .touchConnection(view.server.id, principal.userId, view.server.workspace_id, stamp)
        .catch((error: unknown) => deps.logger.warn({ err: error }, 'MCP connection could not be recorded'));
    }

    const [{ createBridgeServer }, { StreamableHTTPServerTransport }] = await loadServerSide();
    const server = createBridgeServer(deps, context, session);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    reply.hijack();
    const res = reply.raw;
    // Headers set so far (request ids, rate limits) go out with the transport's answer.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) res.setHeader(name, value as string | number | readonly string[]);
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await transport.handleRequest(request.raw, res, request.body);
  };
}

export type McpGateway = ReturnType<typeof createMcpGateway>;
