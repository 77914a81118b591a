import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * The MCP SDK's client and its OAuth helpers, loaded when MCP is first used: together they hold
 * megabytes that a server without MCP integrations should not carry. (The protocol's types and
 * error codes, which the rest of svcgw reads, stay static; they are small.)
 */
export interface ClientSdk {
  Client: typeof Client;
  SSEClientTransport: typeof SSEClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  StreamableHTTPError: typeof StreamableHTTPError;
}

let clientSdk: Promise<ClientSdk> | undefined;
let loadedClientSdk: ClientSdk | undefined;

export function loadClientSdk(): Promise<ClientSdk> {
  clientSdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]).then(([client, sse, streamable]) => {
    loadedClientSdk = {
      Client: client.Client,
      SSEClientTransport: sse.SSEClientTransport,
      StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
      StreamableHTTPError: streamable.StreamableHTTPError,
    };
    return loadedClientSdk;
  });
  return clientSdk;
}

/** Whether `error` is the client transport's HTTP error (none can exist before the client is loaded). */
export const isStreamableHttpError = (error: unknown): error is StreamableHTTPError =>
  loadedClientSdk !== undefined && error instanceof loadedClientSdk.StreamableHTTPError;

let authSdk: Promise<typeof import('@modelcontextprotocol/sdk/client/auth.js')> | undefined;

/** MCP's OAuth client steps (discovery, registration, PKCE, token exchange and refresh). */
export const loadAuthSdk = () => (authSdk ??= import('@modelcontextprotocol/sdk/client/auth.js'));
