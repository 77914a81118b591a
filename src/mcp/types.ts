import type { McpAuthType, McpCapabilityType, McpTransport } from '../storage/schema.js';

export type { McpAuthType, McpCapabilityType, McpTransport };

/**
 * Everything needed to reach an upstream MCP server, secrets opened: what an integration's
 * row says, decrypted. `version` changes whenever any of it does (the row's last update), so
 * that pooled connections made with older settings are replaced.
 */
export interface McpEndpoint {
  integrationId: string;
  version: string;
  url: string;
  transport: McpTransport;
  authType: McpAuthType;
  settings: McpConnectionSettings;
}

/** The `configurations` of an integration, as svcgw reads them (docs/mcp.md). */
export interface McpConnectionSettings {
  custom_headers?: Record<string, string>;
  client_id?: string;
  client_secret?: string;
  token_url?: string;
  scope?: string;
  audience?: string;
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
}

export const CAPABILITY_TYPES: readonly McpCapabilityType[] = ['tool', 'prompt', 'resource', 'resource_template'];

/** What a capability sync learnt from the server. */
export interface ServerMetadata {
  serverInfo: {
    name: string;
    version: string;
    title?: string | undefined;
    description?: string | undefined;
    icons?: unknown;
    websiteUrl?: string | undefined;
  };
  protocolVersion: string | null;
  capabilities: Record<string, unknown>;
  instructions: string | null;
}

/** Headers svcgw (and the MCP transports) set themselves; custom headers may not name them. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'content-type',
  'content-length',
  'host',
  'connection',
  'transfer-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);
