import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * The MCP SDK (its protocol types, client and OAuth helpers), loaded when MCP is first used:
 * together they hold megabytes that a server without MCP integrations should not carry (issue
 * #19; the types alone, a zod schema per message, 1.6 MB of heap). Modules loaded at start import
 * only types from the SDK; its values come through here (the server side, with the bridge that
 * imports it statically: mcp-gateway.ts).
 */
export interface ClientSdk {
  Client: typeof Client;
  SSEClientTransport: typeof SSEClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  StreamableHTTPError: typeof StreamableHTTPError;
}

export type McpTypes = typeof import('@modelcontextprotocol/sdk/types.js');

let types: Promise<McpTypes> | undefined;
let typesLoaded: McpTypes | undefined;

/** The protocol's message schemas, error codes and McpError. */
export const loadTypes = (): Promise<McpTypes> =>
  (types ??= import('@modelcontextprotocol/sdk/types.js').then((module) => (typesLoaded = module)));

/**
 * The protocol's types if loadTypes has run, else undefined: then no McpError can exist either
 * (the client and the server side are loaded after them).
 */
export const loadedTypes = (): McpTypes | undefined => typesLoaded;

let clientSdk: Promise<ClientSdk> | undefined;
let loadedClientSdk: ClientSdk | undefined;

export function loadClientSdk(): Promise<ClientSdk> {
  clientSdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    loadTypes(),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]).then(([client, , sse, streamable]) => {
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
