import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Clock } from '../lib/clock.js';
import { withoutUrlCredentials } from '../lib/mask.js';
import { VERSION } from '../lib/version.js';
import { isStreamableHttpError, loadClientSdk, loadedTypes, loadTypes } from './sdk.js';
import { authorizedFetch, createUpstreamAuth, McpAuthError } from './upstream-auth.js';
import type { McpEndpoint, ServerMetadata } from './types.js';

/** An upstream MCP server could not be reached, or refused the connection. */
export class McpUpstreamError extends Error {
  override readonly name = 'McpUpstreamError';
  constructor(
    message: string,
    /** The HTTP status the server answered with, when it answered. */
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** One initialized connection to an upstream MCP server. */
export interface UpstreamSession {
  readonly client: Client;
  readonly endpoint: McpEndpoint;
  readonly metadata: ServerMetadata;
  /** False once the transport has closed (the server went away, the session expired). */
  readonly open: boolean;
  close(): Promise<void>;
}

export interface ConnectOptions {
  clock: Clock;
  /** Time limit of the handshake (and of the token request). */
  timeoutMs: number;
  /** Called when the server says its tools, prompts or resources changed. */
  onListChanged?: () => void;
  /** Called once when the transport closes. */
  onClose?: () => void;
  fetch?: FetchLike;
}

/**
 * Connects to an upstream MCP server with the official SDK's client over Streamable HTTP or
 * SSE, with the endpoint's authentication on every request, and runs the handshake. Failures
 * are McpUpstreamError with a message fit for the caller (no credentials in it).
 */
export async function connectUpstream(endpoint: McpEndpoint, options: ConnectOptions): Promise<UpstreamSession> {
  const [{ Client, SSEClientTransport, StreamableHTTPClientTransport }, types] = await Promise.all([
    loadClientSdk(),
    loadTypes(),
  ]);
  const auth = createUpstreamAuth(endpoint, {
    clock: options.clock,
    timeoutMs: options.timeoutMs,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const fetchFn = authorizedFetch(auth, options.fetch);
  const url = new URL(endpoint.url);
  const transport: Transport =
    endpoint.transport === 'sse'
      ? new SSEClientTransport(url, { fetch: fetchFn })
      : new StreamableHTTPClientTransport(url, { fetch: fetchFn });
  // The SSE transport keeps the negotiated version to itself; both tell it through this call.
  let protocolVersion: string | null = null;
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version: string) => {
    protocolVersion = version;
    setVersion?.(version);
  };

  const client = new Client({ name: 'svcgw', version: VERSION }, { capabilities: {} });
  if (options.onListChanged) {
    const changed = options.onListChanged;
    for (const schema of [
      types.ToolListChangedNotificationSchema,
      types.PromptListChangedNotificationSchema,
      types.ResourceListChangedNotificationSchema,
    ])
      client.setNotificationHandler(schema, () => changed());
  }
  let open = false;
  let closed = false;
  client.onclose = () => {
    open = false;
    if (!closed) {
      closed = true;
      options.onClose?.();
    }
  };
  // Transport errors after the handshake (a dropped event stream) surface as onclose or as the
  // failure of the request they belong to; nothing else needs them.
  client.onerror = () => {};

  try {
    await client.connect(transport, { timeout: options.timeoutMs });
  } catch (error) {
    await client.close().catch(() => {});
    throw upstreamError(endpoint, error);
  }
  open = true;
  const info = client.getServerVersion() ?? { name: 'unknown', version: 'unknown' };
  const metadata: ServerMetadata = {
    serverInfo: {
      name: info.name,
      version: info.version,
      title: info.title,
      description: info.description,
      icons: info.icons,
      websiteUrl: info.websiteUrl,
    },
    protocolVersion,
    capabilities: { ...(client.getServerCapabilities() ?? {}) },
    instructions: client.getInstructions() ?? null,
  };
  return {
    client,
    endpoint,
    metadata,
    get open() {
      return open;
    },
    async close() {
      closed = true;
      open = false;
      await client.close().catch(() => {});
    },
  };
}

/** A connection failure in words a caller can act on, without the URL's password. */
export function upstreamError(endpoint: McpEndpoint, error: unknown): McpUpstreamError {
  if (error instanceof McpUpstreamError) return error;
  const where = withoutUrlCredentials(endpoint.url);
  if (error instanceof McpAuthError) return new McpUpstreamError(withoutUrlCredentials(error.message), 401);
  if (isStreamableHttpError(error))
    return new McpUpstreamError(
      `The MCP server ${where} answered HTTP ${error.code ?? '?'}: ${withoutUrlCredentials(error.message)}`,
      error.code ?? null,
    );
  const status = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: { message?: string } }).cause?.message;
  return new McpUpstreamError(
    withoutUrlCredentials(`The MCP server ${where} could not be reached: ${message}${cause ? ` (${cause})` : ''}`),
    typeof status === 'number' && status >= 100 && status < 600 ? status : null,
  );
}

/** Whether a request failed because the session is gone (and a new session may serve it). */
export function sessionLost(error: unknown): boolean {
  if (isStreamableHttpError(error)) return error.code === 404;
  const types = loadedTypes();
  if (types && error instanceof types.McpError) return error.code === Number(types.ErrorCode.ConnectionClosed);
  return error instanceof Error && error.message === 'Not connected';
}
