import type { McpAuthType, McpCapabilityType, McpTransport } from '../storage/schema.js';
import type { ValueFormat } from '../secrets/secret-value.js';
import type { SecretTarget } from '../secrets/types.js';

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
  /** Fields read from secret references (`secret_mappings`); they win over `settings`. */
  mapped?: MappedSettings;
  /** Where the pool keeps its connection: the integration's id, or one per user for per-user OAuth. */
  poolKey?: string;
  /** Per-user OAuth: the calling user's access token (docs/mcp.md, "Per-user authorization"). */
  userToken?: UserTokenSource;
}

/** A user's upstream access token, renewed with the refresh token when it expires or is refused. */
export interface UserTokenSource {
  /** The current access token; McpAuthorizationRequired when the user has none (or it cannot be renewed). */
  token(): Promise<string>;
  /** The upstream refused `token`: renew it; false when that is not possible. */
  rejected(token: string): Promise<boolean>;
}

/**
 * Whether an integration authorizes each user (authorization code with PKCE) rather than itself
 * (client credentials): `oauth_auto` does unless `grant_type` says client_credentials, or,
 * without `grant_type`, a client secret is configured (what `oauth_auto` meant before).
 */
export function authorizesPerUser(authType: McpAuthType, settings: McpConnectionSettings, mapsSecret = false): boolean {
  if (authType !== 'oauth_auto') return false;
  if (settings.grant_type) return settings.grant_type === 'authorization_code';
  return !(settings.client_secret !== undefined || mapsSecret);
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
  /** oauth_auto: per-user authorization (authorization_code) or svcgw's own (client_credentials). */
  grant_type?: 'authorization_code' | 'client_credentials';
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

/** One mapped field of an MCP integration: the reference it is read from (null: deleted since). */
export interface McpMappedField {
  targetField: string;
  target: SecretTarget | null;
  secretKey: string | null;
  format: ValueFormat;
  /** The workspaces the reference allows: null for all of them. */
  allowedWorkspaces: readonly string[] | null;
  /** For messages: `configurations.client_secret of MCP integration github (secret reference gh-app)`. */
  where: string;
}

/**
 * The connection settings of an integration with mapped fields read from their secret managers
 * through the shared secret cache (the same TTL, single reads and refresh floor as provider
 * credentials). Failures are SecretManagerError naming the reference, never a value.
 */
export interface MappedSettings {
  readonly fields: readonly McpMappedField[];
  /** The settings with every mapped field as the cache has it now. */
  current(): Promise<McpConnectionSettings>;
  /** After the upstream refused them: read again; true when a value changed (so trying again may help). */
  refresh(): Promise<boolean>;
  /** The message refusing use in a workspace that a mapped reference does not allow, or null. */
  forbiddenIn(workspaceId: string): string | null;
}
