import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { AppError } from '../lib/errors.js';
import { exceedsJsonDepth, jsonTooDeepMessage } from '../lib/json-depth.js';
import { ENDPOINT_PATHS, type EndpointType } from '../providers/endpoints.js';
import { BOTH_KEY_TYPES, type RouteAccess } from '../http/route-config.js';
import type { GatewayRoute } from './exchange.js';
import { guardAnswer } from './guardrails/request-guard.js';
import { createGatewayHandler, type GatewayDeps } from './handle-request.js';
import { limitedBody } from './limited-body.js';
import { reachableModels } from './model-list.js';
import type { McpGateway } from './mcp/mcp-gateway.js';
import { CALLBACK_PATH, type McpOAuthEndpoints } from './mcp/oauth-endpoints.js';
import { markHandled } from './refused-requests.js';
import {
  createPromptRunner,
  promptCompletionBody,
  promptRenderBody,
  promptRunParams,
  type GatewayPrompts,
} from './prompt-run.js';
import {
  chatCompletionBody,
  completionBody,
  embeddingsBody,
  imageGenerationBody,
  moderationBody,
  rerankBody,
  responsesBody,
  quickBodyChecks,
  speechBody,
} from './request-schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body bytes as received, kept so that an unchanged body is forwarded without re-encoding. */
    rawBody?: Buffer;
  }
}

const GATEWAY_AUTH = { auth: { scope: 'completions.write', keyTypes: BOTH_KEY_TYPES } } as const;
/** A gateway route's config: its auth, and the endpoint type its refusals are logged under. */
const gatewayConfig = (endpointType: EndpointType) => ({ ...GATEWAY_AUTH, gateway: endpointType });
const TAG = ['Gateway'];

const JSON_ROUTES: Array<[EndpointType, z.ZodType, string]> = [
  ['chatComplete', chatCompletionBody, 'Chat completion (OpenAI format; `stream: true` relays server-sent events)'],
  ['complete', completionBody, 'Text completion'],
  ['embed', embeddingsBody, 'Embeddings'],
  ['rerank', rerankBody, "Rerank (the provider's body is returned unchanged)"],
  ['imageGenerate', imageGenerationBody, 'Image generation'],
  ['createSpeech', speechBody, 'Text to speech (binary audio)'],
  ['moderate', moderationBody, 'Moderation'],
  ['createModelResponse', responsesBody, 'Responses API'],
];
const MULTIPART_ROUTES: EndpointType[] = ['imageEdit', 'createTranscription', 'createTranslation'];

/**
 * The data plane: OpenAI-compatible routes with validation, and every other /v1 path passed
 * through unchanged. Registered last: paths under a control-plane prefix (/v1/workspaces/…)
 * never reach a provider, even for a method the admin API lacks.
 */
export async function registerGatewayRoutes(
  app: FastifyInstance,
  deps: GatewayDeps & {
    controlPlane: RouteAccess[];
    prompts?: GatewayPrompts;
    mcp?: McpGateway;
    mcpOAuth?: McpOAuthEndpoints;
  },
): Promise<void> {
  const pipeline = createGatewayHandler(deps);
  const handle = (route: GatewayRoute, request: FastifyRequest, reply: FastifyReply) => {
    markHandled(request);
    return pipeline(route, request, reply);
  };
  // Lower case, so that /v1/WORKSPACES is as unreachable for a provider as /v1/workspaces.
  const controlPlaneSegments = new Set(
    deps.controlPlane
      .map((route) => route.url.split('/')[2]?.toLowerCase())
      .filter((segment): segment is string => Boolean(segment)),
  );
  const firstClassPaths = new Set([
    '/v1/models',
    ...[...JSON_ROUTES.map(([type]) => type), ...MULTIPART_ROUTES].map(
      (type) => `/v1${ENDPOINT_PATHS[type as Exclude<EndpointType, 'proxy'>].path}`,
    ),
  ]);
  const maxBodyBytes = deps.config.max_body_bytes;

  // JSON routes: the bytes are kept next to the parsed body so an unchanged body is forwarded as received.
  await app.register(async (json) => {
    json.removeAllContentTypeParsers();
    json.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const bytes = body as Buffer;
      request.rawBody = bytes;
      if (exceedsJsonDepth(bytes)) return done(new AppError('INVALID_JSON', jsonTooDeepMessage()), undefined);
      try {
        done(null, JSON.parse(bytes.toString('utf8')));
      } catch {
        done(new AppError('INVALID_JSON', 'Request body is not valid JSON.'), undefined);
      }
    });
    // Output guardrails judge the answer as it is sent (JSON whole, streams as they end): see guardrails/request-guard.ts.
    // Callback-style: without guardrails it is one lookup, no promise.
    json.addHook('onSend', (_request, reply, payload, done) => {
      const guarded = guardAnswer(reply, payload);
      if (guarded instanceof Promise) guarded.then((sent: unknown) => done(null, sent), done);
      else done(null, guarded);
    });
    const zjson = json.withTypeProvider<ZodTypeProvider>();
    zjson.setValidatorCompiler(quickThenZod);
    zjson.setSerializerCompiler(serializerCompiler);
    for (const [endpointType, schema, summary] of JSON_ROUTES) {
      const { path } = ENDPOINT_PATHS[endpointType as Exclude<EndpointType, 'proxy'>];
      zjson.post(
        `/v1${path}`,
        { schema: { tags: TAG, summary, body: schema }, config: gatewayConfig(endpointType) },
        (request, reply) => handle({ endpointType, body: 'json' }, request, reply),
      );
    }
    if (deps.prompts) {
      // Prompt runs: the rendered body goes through the same pipeline (prompt-run.ts).
      const prompts = createPromptRunner(deps.prompts, (route, sent, reply, received) => {
        markHandled(received);
        return pipeline(route, sent, reply);
      });
      zjson.post(
        '/v1/prompts/:promptId/render',
        {
          schema: {
            tags: ['Prompts'],
            summary: 'Render a prompt: the request body it makes',
            params: promptRunParams,
            body: promptRenderBody,
          },
          config: gatewayConfig('chatComplete'),
        },
        (request) => prompts.render(request, request.params.promptId, request.body),
      );
      zjson.post(
        '/v1/prompts/:promptId/completions',
        {
          schema: {
            tags: ['Prompts'],
            summary: 'Run a prompt through the gateway, as a chat (or text) completion',
            params: promptRunParams,
            body: promptCompletionBody,
          },
          config: gatewayConfig('chatComplete'),
        },
        (request, reply) => prompts.run(request, reply, request.params.promptId, request.body),
      );
    }
  });

  const mcp = deps.mcp;
  if (mcp) await app.register(async (scope) => registerMcpRoutes(scope, mcp, deps.mcpOAuth));

  // Raw routes: the body streams to the provider untouched (multipart uploads, pass-through).
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_request, payload, done) => done(null, limitedBody(payload, maxBodyBytes)));
    for (const endpointType of MULTIPART_ROUTES) {
      const { path } = ENDPOINT_PATHS[endpointType as Exclude<EndpointType, 'proxy'>];
      raw.post(
        `/v1${path}`,
        {
          schema: { tags: TAG, summary: `${endpointType} (multipart, forwarded as sent)` },
          config: gatewayConfig(endpointType),
        },
        (request, reply) => handle({ endpointType, body: 'raw' }, request, reply),
      );
    }
    raw.get(
      '/v1/models',
      {
        schema: {
          tags: TAG,
          summary:
            "List models: the provider's list with a provider header, else `@slug/model` for the key's stored providers",
        },
        config: gatewayConfig('listModels'),
      },
      async (request, reply) => {
        if (hasProviderHeader(request)) return handle({ endpointType: 'listModels', body: 'raw' }, request, reply);
        const principal = request.principal!;
        const workspaceId = principal.workspaceId ?? (await deps.defaultWorkspaceId(principal.organisationId));
        return reply.send(await reachableModels(deps, principal, workspaceId));
      },
    );
    raw.all(
      '/v1/*',
      {
        schema: { tags: TAG, summary: 'Pass-through: any other provider endpoint, forwarded and returned unchanged' },
        config: gatewayConfig('proxy'),
      },
      (request, reply) => {
        // Paths arrive normalised (one slash, no trailing slash). What is left to catch: a
        // control-plane path, and another spelling (case) of a route svcgw serves itself, which
        // must not reach a provider without that route's validation, limits and logging.
        const path = request.url.split('?')[0] ?? request.url;
        const lower = path.toLowerCase();
        if (controlPlaneSegments.has(lower.split('/')[2] ?? '')) {
          throw new AppError('ROUTE_NOT_FOUND', `No route for ${request.method} ${path}.`);
        }
        if (lower !== path && firstClassPaths.has(lower)) {
          throw new AppError(
            'ROUTE_NOT_FOUND',
            `No route for ${request.method} ${path}; paths are case-sensitive (${lower}).`,
          );
        }
        return handle({ endpointType: 'proxy', body: 'raw' }, request, reply);
      },
    );
  });
}

/**
 * The JSON routes' validator: the body's quick check first (request-schemas.ts); zod only for
 * what it does not pass, so that zod's verdict and error message stay the ones answered.
 */
const quickThenZod: typeof validatorCompiler = (route) => {
  const zod = validatorCompiler(route);
  const quick = route.httpPart === 'body' ? quickBodyChecks.get(route.schema as z.ZodType) : undefined;
  return quick ? (data: unknown) => (quick(data) ? { value: data } : zod(data)) : zod;
};

const MCP_CONFIG = { auth: { scope: 'mcp.invoke', keyTypes: BOTH_KEY_TYPES }, gateway: 'mcp' } as const;
const MCP_TAG = ['MCP'];

/**
 * MCP servers' endpoints (`/v1/mcp/{server}/mcp`, Streamable HTTP). The body is parsed here and
 * handed to the SDK's transport as parsed; the answer (JSON or an event stream) is written by
 * the transport on the raw response. svcgw serves MCP without sessions: GET (a server event
 * stream) and DELETE (ending a session) answer 405, and nothing else lives under /v1/mcp.
 */
function registerMcpRoutes(app: FastifyInstance, mcp: McpGateway, oauth: McpOAuthEndpoints | undefined): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    const bytes = body as Buffer;
    if (exceedsJsonDepth(bytes)) return done(new AppError('INVALID_JSON', jsonTooDeepMessage()), undefined);
    try {
      done(null, JSON.parse(bytes.toString('utf8')));
    } catch {
      done(new AppError('INVALID_JSON', 'Request body is not valid JSON.'), undefined);
    }
  });
  app.post<{ Params: { server: string } }>(
    '/v1/mcp/:server/mcp',
    {
      schema: {
        tags: MCP_TAG,
        summary: "An MCP server's endpoint (Streamable HTTP; JSON-RPC in, JSON or an event stream out)",
        description:
          'Needs a key with mcp.invoke; the server is named by slug or id. See docs/mcp.md for access, logging, limits and guardrails.',
      },
      config: MCP_CONFIG,
    },
    (request, reply) => mcp(request, reply, request.params.server),
  );
  for (const method of ['GET', 'DELETE'] as const)
    app.route({
      method,
      url: '/v1/mcp/:server/mcp',
      schema: { tags: MCP_TAG, summary: `${method} on an MCP endpoint: 405 (svcgw serves MCP without sessions)` },
      config: MCP_CONFIG,
      handler: async (request, reply) => {
        // Clients try GET after initialize and carry on without it: a normal step, not a failure to log.
        markHandled(request);
        reply.header('allow', 'POST');
        throw new AppError(
          'METHOD_NOT_ALLOWED',
          `svcgw's MCP endpoints take POST only: they keep no session, so there is no event stream to GET or session to DELETE.`,
        );
      },
    });
  if (oauth) registerMcpOAuthRoutes(app, oauth);
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const)
    app.route({
      method,
      url: '/v1/mcp/*',
      schema: { tags: MCP_TAG, summary: 'Anything else under /v1/mcp: 404 (never passed to a provider)' },
      config: MCP_CONFIG,
      handler: async (request) => {
        throw new AppError(
          'ROUTE_NOT_FOUND',
          `No route for ${request.method} ${request.url.split('?')[0]}; an MCP server's endpoint is /v1/mcp/{server}/mcp.`,
        );
      },
    });
}

const USER_MCP_CONFIG = { auth: { scope: 'mcp.invoke', keyTypes: BOTH_KEY_TYPES } } as const;
const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * Per-user OAuth of MCP servers (docs/mcp.md): start the authorization, the authorization
 * server's callback (public: the browser arrives without svcgw credentials; the sealed state
 * says who it is for), and the caller's own connection.
 */
function registerMcpOAuthRoutes(app: FastifyInstance, oauth: McpOAuthEndpoints): void {
  app.get<{ Params: { server: string }; Querystring: { redirect?: string } }>(
    '/v1/mcp/:server/oauth/authorize',
    {
      schema: {
        tags: MCP_TAG,
        summary: "Start the caller's authorization at an MCP server's authorization server (per-user OAuth)",
        description:
          'Answers {authorization_url} to open in a browser; with ?redirect=true a 302 to it. Needs a key, session or JWT of a user, with mcp.invoke.',
      },
      config: USER_MCP_CONFIG,
    },
    async (request, reply) => {
      const answer = await oauth.authorize(request.principal!, request.params.server, request);
      if (request.query.redirect === 'true') return reply.redirect(answer.authorization_url, 302);
      return answer;
    },
  );
  app.get<{ Params: { server: string } }>(
    '/v1/mcp/:server/oauth/connection',
    {
      schema: { tags: MCP_TAG, summary: "The caller's own connection to an MCP server that authorizes each user" },
      config: USER_MCP_CONFIG,
    },
    async (request) => oauth.connection(request.principal!, request.params.server, request),
  );
  app.delete<{ Params: { server: string } }>(
    '/v1/mcp/:server/oauth/connection',
    {
      schema: { tags: MCP_TAG, summary: "Revoke the caller's own connection (svcgw forgets the user's tokens)" },
      config: { ...USER_MCP_CONFIG, audit: { resourceType: 'mcp_server', action: 'revoke_connection' } },
    },
    async (request) => {
      const { view } = await oauth.revoke(request.principal!, request.params.server);
      request.auditResourceId = view.server.id;
      request.auditWorkspaceId = view.server.workspace_id;
      return { success: true };
    },
  );
  app.get<{ Querystring: Record<string, string | undefined> }>(
    CALLBACK_PATH,
    {
      schema: {
        tags: MCP_TAG,
        summary: "The authorization server's redirect back to svcgw (opened by the user's browser)",
      },
      config: { auth: { public: true } },
    },
    async (request, reply) => {
      const { server } = await oauth.callback(request.query);
      return reply
        .type('text/html; charset=utf-8')
        .send(
          `<!doctype html><title>svcgw</title><p>svcgw is now authorized to use MCP server ${escapeHtml(server.name)} for you. You can close this window.</p>`,
        );
    },
  );
}

function hasProviderHeader(request: FastifyRequest): boolean {
  return request.headers['x-service-provider'] !== undefined || request.headers['x-service-virtual-key'] !== undefined;
}
