import type { CredentialStatus } from './credentials.js';

export type McpTransport = 'http' | 'sse';

export type McpAuthType = 'none' | 'headers' | 'oauth_client_credentials' | 'oauth_auto';

export type McpSyncStatus = 'pending' | 'synced' | 'error';

export type McpCapabilityType = 'tool' | 'prompt' | 'resource' | 'resource_template';

/**
 * An upstream MCP server as the organisation (or one workspace) configured it. Secrets of
 * `configurations` (custom headers, client secret) are sealed like provider credentials; the
 * fields after `owner_id` are what the last capability sync learnt from the server.
 */
export interface McpIntegrationsTable {
  id: string;
  organisation_id: string;
  /** Null for an organisation integration. */
  workspace_id: string | null;
  slug: string;
  name: string;
  description: string | null;
  url: string;
  transport: McpTransport;
  auth_type: McpAuthType;
  configurations: string;
  /** JSON array of the reference's SecretMapping; always empty for now (docs/mcp.md). */
  secret_mappings: string;
  /** 1: every workspace may use it unless a row of mcp_integration_workspaces says otherwise. */
  global_workspace_access: number;
  status: CredentialStatus;
  owner_id: string | null;
  /** JSON of the server's `serverInfo` (name, version, title, description, icons, websiteUrl). */
  server_info: string | null;
  protocol_version: string | null;
  /** JSON of the server's capabilities as it announced them at initialize. */
  capability_flags: string | null;
  instructions: string | null;
  sync_status: McpSyncStatus;
  last_synced_at: string | null;
  sync_error: string | null;
  created_at: string;
  last_updated_at: string;
}

export interface McpIntegrationWorkspacesTable {
  integration_id: string;
  workspace_id: string;
  enabled: number;
  created_at: string;
  last_updated_at: string;
}

/** A tool, prompt, resource or resource template synced from an integration's server. */
export interface McpCapabilitiesTable {
  id: string;
  integration_id: string;
  type: McpCapabilityType;
  /** Tool or prompt name, resource URI, or URI template. */
  name: string;
  title: string | null;
  description: string | null;
  /** JSON of the item as the server listed it (input schema, arguments, mime type, …). */
  definition: string;
  enabled: number;
  /** 0 once the server no longer lists it: hidden, its enabled flag kept should it return. */
  present: number;
  created_at: string;
  last_updated_at: string;
}

/** A workspace's instance of an MCP integration: what clients reach at /v1/mcp/{slug}/mcp. */
export interface McpServersTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  integration_id: string;
  slug: string;
  name: string;
  description: string | null;
  status: CredentialStatus;
  owner_id: string | null;
  default_user_access: 'allow' | 'deny';
  /** JSON arrays of guardrail references (or inline guardrails) run on tool arguments and results. */
  input_guardrails: string | null;
  output_guardrails: string | null;
  created_at: string;
  last_updated_at: string;
}

/** A server's own switch for one capability (absent: enabled, if the integration enables it). */
export interface McpServerCapabilitiesTable {
  server_id: string;
  type: McpCapabilityType;
  name: string;
  enabled: number;
  last_updated_at: string;
}

export interface McpServerUserAccessTable {
  server_id: string;
  user_id: string;
  enabled: number;
  created_at: string;
  last_updated_at: string;
}

/**
 * A user who has connected to the server through the gateway (their first initialize), with
 * the user's own upstream OAuth tokens when the integration authorizes per user (sealed).
 */
export interface McpConnectionsTable {
  server_id: string;
  user_id: string;
  workspace_id: string;
  created_at: string;
  last_updated_at: string;
  access_token: string | null;
  refresh_token: string | null;
  /** Epoch milliseconds; null when the token endpoint gave no lifetime. */
  token_expires_at: number | null;
  token_scope: string | null;
}

/** svcgw's client registration at an MCP integration's authorization server (sealed JSON). */
export interface McpOAuthClientsTable {
  integration_id: string;
  issuer: string;
  redirect_uri: string;
  client_information: string;
  created_at: string;
}

/** The mcp tables, as `Database` (../schema.ts) joins them. */
export interface McpTables {
  mcp_integrations: McpIntegrationsTable;
  mcp_integration_workspaces: McpIntegrationWorkspacesTable;
  mcp_capabilities: McpCapabilitiesTable;
  mcp_servers: McpServersTable;
  mcp_server_capabilities: McpServerCapabilitiesTable;
  mcp_server_user_access: McpServerUserAccessTable;
  mcp_connections: McpConnectionsTable;
  mcp_oauth_clients: McpOAuthClientsTable;
}
