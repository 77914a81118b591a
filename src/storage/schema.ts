import type { Generated } from 'kysely';

/**
 * Table types. Timestamps are ISO-8601 UTC strings and structured fields are JSON text, so
 * that the same migrations and queries run on SQLite and PostgreSQL.
 */
export interface OrganisationsTable {
  id: string;
  name: string;
  created_at: string;
  last_updated_at: string;
}

export type WorkspaceStatus = 'active' | 'archived';
export interface WorkspacesTable {
  id: string;
  organisation_id: string;
  slug: string;
  name: string;
  description: string | null;
  status: WorkspaceStatus;
  is_default: number;
  created_at: string;
  last_updated_at: string;
  /** JSON array of {type, unit, value}, or null. */
  rate_limits: string | null;
  /** JSON UsageLimits object, or null. */
  usage_limits: string | null;
  /** JSON `{input_guardrails, output_guardrails}` run on every request of the workspace, or null. */
  defaults?: string | null;
  /** JSON array of model patterns the workspace's keys may use (`defaults.allowed_models`); null: any. */
  allowed_models: string | null;
}

export type OrgRole = 'owner' | 'admin' | 'member';
export interface UsersTable {
  id: string;
  organisation_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: OrgRole;
  created_at: string;
  last_updated_at: string;
  /** The SCIM userName, for users an identity provider provisioned (or claimed); unique per organisation. */
  scim_user_name?: string | null;
  /** The identity provider's own id of the user (SCIM externalId). */
  external_id?: string | null;
  /** JSON object of the other SCIM attributes the provider sent (emails, displayName, extensions), never a password. */
  scim_attributes?: string | null;
  /**
   * Set while the user is deactivated (SCIM `active: false`): their API keys are refused and
   * their sessions must be too; null for an active user.
   */
  deactivated_at?: string | null;
}

export type WorkspaceRole = 'admin' | 'manager' | 'member';
export interface WorkspaceMembersTable {
  workspace_id: string;
  user_id: string;
  role: WorkspaceRole;
  created_at: string;
  last_updated_at: string | null;
  /** `scim` for a membership a SCIM group mapping granted (and may take away); null for one made by hand. */
  granted_by?: 'scim' | null;
}

export type ApiKeyType = 'organisation-service' | 'workspace-service' | 'workspace-user';
export type ApiKeyStatus = 'active' | 'revoked' | 'expired';
export interface ApiKeysTable {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  user_id: string | null;
  type: ApiKeyType;
  name: string;
  description: string | null;
  key_hash: string;
  /** First and last characters of the raw key, for people to recognise it by. */
  key_hint: string;
  scopes: string;
  status: ApiKeyStatus;
  expires_at: string | null;
  creation_mode: string;
  created_by_key_id: string | null;
  created_at: string;
  last_updated_at: string;
  /** JSON array of {type, unit, value}, or null. */
  rate_limits: string | null;
  /** JSON UsageLimits object, or null. */
  usage_limits: string | null;
  /** Hash of the secret replaced by the last rotation; valid until `previous_key_expires_at`. */
  previous_key_hash: string | null;
  previous_key_expires_at: string | null;
  /** JSON {rotation_period, key_transition_period_ms}, or null; the due time is `next_rotation_at`. */
  rotation_policy: string | null;
  next_rotation_at: string | null;
  last_rotated_at: string | null;
  /** Set by a scheduled rotation (whose new secret nobody holds) until POST .../rotate issues one. */
  new_key_pending_since: string | null;
  /** JSON array of e-mail addresses the key's alerts also go to, or null. */
  alert_emails?: string | null;
  /** JSON {metadata?, config_id?, allow_config_override?}, or null. */
  defaults: string | null;
}

export interface RateLimitPoliciesTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  name: string | null;
  conditions: string;
  group_by: string;
  type: 'requests' | 'tokens';
  unit: 'rpm' | 'rph' | 'rpd' | 'rpw';
  value: number;
  status: 'active' | 'archived';
  created_at: string;
  last_updated_at: string;
}

export interface AuditLogsTable {
  seq: Generated<number>;
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  timestamp: string;
  /** `jwt`: a caller that authenticated with a JWT (docs/jwt.md), or tried to; `session`: an SSO session (docs/sso.md). */
  actor_type: 'api_key' | 'system' | 'jwt' | 'session';
  actor_key_id: string | null;
  actor_user_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  method: string;
  path: string;
  query: string | null;
  request_body: string | null;
  response_status_code: number;
  client_ip: string | null;
  /** The country the proxy in front named (`cf-ipcountry` / `x-country`); absent on records from before 0031. */
  country?: string | null;
  request_id: string;
  /** Why an authentication was refused (failed JWTs); null for every other record. */
  detail?: string | null;
}

/** An organisation's JWT authentication (docs/jwt.md); `settings` is JSON, see auth/jwt/settings.ts. */
export interface JwtSettingsTable {
  organisation_id: string;
  /** The `iss` its tokens carry; unique, so that a token names its organisation. */
  issuer: string;
  settings: string;
  created_at: string;
  last_updated_at: string;
}

export interface Database {
  organisations: OrganisationsTable;
  workspaces: WorkspacesTable;
  secret_references: SecretReferencesTable;
  mcp_integrations: McpIntegrationsTable;
  mcp_integration_workspaces: McpIntegrationWorkspacesTable;
  mcp_capabilities: McpCapabilitiesTable;
  mcp_servers: McpServersTable;
  mcp_server_capabilities: McpServerCapabilitiesTable;
  mcp_server_user_access: McpServerUserAccessTable;
  mcp_connections: McpConnectionsTable;
  mcp_oauth_clients: McpOAuthClientsTable;
  users: UsersTable;
  workspace_members: WorkspaceMembersTable;
  api_keys: ApiKeysTable;
  rate_limit_policies: RateLimitPoliciesTable;
  audit_logs: AuditLogsTable;
  integrations: IntegrationsTable;
  agent_integrations: AgentIntegrationsTable;
  agent_integration_workspaces: AgentIntegrationWorkspacesTable;
  agent_skills: AgentSkillsTable;
  agent_servers: AgentServersTable;
  agent_server_skills: AgentServerSkillsTable;
  agent_server_users: AgentServerUsersTable;
  integration_workspaces: IntegrationWorkspacesTable;
  providers: ProvidersTable;
  virtual_keys: VirtualKeysTable;
  request_logs: RequestLogsTable;
  usage_limit_policies: UsageLimitPoliciesTable;
  usage_counters: UsageCountersTable;
  limit_counters: LimitCountersTable;
  notifications: NotificationsTable;
  invites: InvitesTable;
  invite_workspaces: InviteWorkspacesTable;
  security_settings: SecuritySettingsTable;
  configs: ConfigsTable;
  config_versions: ConfigVersionsTable;
  guardrails: GuardrailsTable;
  guardrail_versions: GuardrailVersionsTable;
  integration_models: IntegrationModelsTable;
  model_aliases: ModelAliasesTable;
  prompt_collections: PromptCollectionsTable;
  prompts: PromptsTable;
  prompt_versions: PromptVersionsTable;
  prompt_labels: PromptLabelsTable;
  jwt_settings: JwtSettingsTable;
  scim_tokens: ScimTokensTable;
  scim_groups: ScimGroupsTable;
  scim_group_members: ScimGroupMembersTable;
  scim_workspace_mappings: ScimWorkspaceMappingsTable;
  deployments: DeploymentsTable;
  deployment_instances: DeploymentInstancesTable;
  sso_settings: SsoSettingsTable;
  sso_logins: SsoLoginsTable;
  sessions: SessionsTable;
}

export type CredentialStatus = 'active' | 'archived';

/**
 * An organisation's credential for one provider type. `encrypted_key` is a secret-box value
 * (never the raw key); `configurations` is JSON whose secret fields are sealed the same way.
 */
export interface IntegrationsTable {
  id: string;
  organisation_id: string;
  slug: string;
  name: string;
  ai_provider_id: string;
  description: string | null;
  encrypted_key: string | null;
  key_hint: string | null;
  configurations: string;
  tags: string;
  status: CredentialStatus;
  created_at: string;
  last_updated_at: string;
  last_reset_at: string | null;
  /** 1: every model not disabled in `integration_models` is allowed; 0: only those enabled there. */
  allow_all_models: number;
  /** 1: every workspace may use the integration, unless `integration_workspaces` disables it there; 0: only those it enables. */
  all_workspaces: number;
  /** JSON array of {target_field, secret_reference_id, secret_key, value_format}: fields read from a secret manager. */
  secret_mappings: string;
}

/** A workspace's own setting for an integration (`/v1/integrations/{slug}/workspaces`); wins over `all_workspaces`. */
export interface IntegrationWorkspacesTable {
  integration_id: string;
  workspace_id: string;
  organisation_id: string;
  enabled: number;
  created_at: string;
  last_updated_at: string;
}

/** One model entry of an integration's catalogue (`/v1/integrations/{slug}/models`). */
export interface IntegrationModelsTable {
  id: string;
  integration_id: string;
  /** The model name as the provider knows it (`gpt-4o-mini`). */
  slug: string;
  name: string | null;
  enabled: number;
  is_custom: number;
  is_finetune: number;
  base_model_slug: string | null;
  /** JSON pricing_config as given, or null. */
  pricing_config: string | null;
  created_at: string;
  last_updated_at: string;
}

/** `model: "<name>"` resolved to `@slug/model` or to a config, per workspace or organisation-wide. */
export interface ModelAliasesTable {
  id: string;
  organisation_id: string;
  /** Null for an organisation-wide alias. */
  workspace_id: string | null;
  /** The workspace id, or the organisation id for an organisation-wide alias: names are unique per scope. */
  scope_id: string;
  name: string;
  /** `@provider-slug/model`, or null when the alias names a config. */
  target_model: string | null;
  config_id: string | null;
  description: string | null;
  created_at: string;
  last_updated_at: string;
}

/** A workspace's handle on an integration: what `x-service-provider: @slug` names. */
export interface ProvidersTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  integration_id: string;
  slug: string;
  name: string;
  note: string | null;
  tags: string;
  status: CredentialStatus;
  created_at: string;
  last_updated_at: string;
  last_reset_at: string | null;
  /** JSON UsageLimits (with last_reset_at), or null. */
  usage_limits: string | null;
  /** JSON array of rate limits, or null. */
  rate_limits: string | null;
  /** After it, the gateway refuses the credential. */
  expires_at: string | null;
}

/** The legacy workspace credential (`x-service-virtual-key`): provider type and key in one. */
export interface VirtualKeysTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  slug: string;
  name: string;
  provider: string;
  encrypted_key: string | null;
  key_hint: string | null;
  note: string | null;
  configurations: string;
  status: CredentialStatus;
  created_at: string;
  last_updated_at: string;
  last_reset_at: string | null;
  /** JSON array of {target_field, secret_reference_id, secret_key, value_format}: fields read from a secret manager. */
  secret_mappings: string;
  /** JSON UsageLimits (with last_reset_at), or null. */
  usage_limits: string | null;
  /** JSON array of rate limits, or null. */
  rate_limits: string | null;
  /** After it, the gateway refuses the credential. */
  expires_at: string | null;
}

export type SecretManagerType = 'aws_sm' | 'azure_kv' | 'hashicorp_vault';

/**
 * Where a secret lives in an external secret manager and how to sign in to it. `auth_config`
 * is JSON whose secret fields are sealed with the master key; the secret itself is never stored.
 */
export interface SecretReferencesTable {
  id: string;
  organisation_id: string;
  slug: string;
  name: string;
  description: string | null;
  manager_type: SecretManagerType;
  auth_config: string;
  secret_path: string;
  secret_key: string | null;
  allow_all_workspaces: number;
  /** JSON array of workspace ids (used when allow_all_workspaces is 0). */
  allowed_workspaces: string;
  tags: string;
  status: CredentialStatus;
  /** The user who created it, when the key had one. */
  created_by: string | null;
  created_at: string;
  last_updated_at: string;
}

/** One gateway request, written in batches off the hot path. `cost` is null when unknown, never 0 for "unknown". */
export interface RequestLogsTable {
  seq: Generated<number>;
  id: string;
  trace_id: string;
  request_id: string;
  organisation_id: string;
  workspace_id: string;
  api_key_id: string;
  provider: string | null;
  credential_source: string | null;
  model: string | null;
  endpoint_type: string;
  method: string;
  path: string;
  status_code: number;
  is_success: number;
  is_stream: number;
  error_code: string | null;
  error_message: string | null;
  latency_ms: number;
  ttfb_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  total_tokens: number | null;
  cost: number | null;
  cost_currency: string;
  cache_status: string;
  /** A cache hit: what the provider call it replaced would have cost, US dollars (null: not a hit, or not priced). */
  cache_savings?: number | null;
  metadata: string | null;
  request_body: string | null;
  response_body: string | null;
  created_at: string;
  /** The config that routed the request (id), when one did. */
  config_id: string | null;
  /** JSON array of {target, provider, status, latency_ms, error_code?}: every upstream attempt. */
  attempts: string | null;
  retry_count: Generated<number>;
  span_id: string | null;
  parent_span_id: string | null;
  span_name: string | null;
  prompt_id: string | null;
  /** The model the client asked for; `model` is the one that answered (they differ after overrides or aliases). */
  requested_model: string | null;
  /** Seconds of audio, for transcriptions billed by duration. */
  audio_seconds: number | null;
  /** Every guardrail hook's results (JSON: before_request_hooks, after_request_hooks); null when none ran. */
  hook_results: string | null;
  /** passed, failed (let through, 246) or denied (446); null when no guardrail ran. */
  guardrail_verdict: string | null;
  /** The prompt version number and label name a prompt run used (prompt_id names the prompt). */
  prompt_version?: number | null;
  prompt_label?: string | null;
  /** An MCP tool call: the MCP server, the tool, and the sizes (bytes of JSON) of its arguments and result. */
  mcp_server_id?: string | null;
  mcp_tool?: string | null;
  /** Agent gateway calls (docs/agents.md): the agent server and the JSON-RPC method (request_bytes and response_bytes too). */
  agent_server_id?: string | null;
  rpc_method?: string | null;
  request_bytes?: number | null;
  response_bytes?: number | null;
}

export interface UsageLimitPoliciesTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  name: string | null;
  conditions: string;
  group_by: string;
  type: 'cost' | 'tokens';
  credit_limit: number;
  alert_threshold: number | null;
  periodic_reset: 'weekly' | 'monthly' | null;
  periodic_reset_days: number | null;
  next_usage_reset_at: string | null;
  last_reset_at: string | null;
  status: 'active' | 'archived';
  created_at: string;
  last_updated_at: string;
}

/** Settled usage of one budget bucket in one period (`scope_type` policy | api_key | workspace). */
export interface UsageCountersTable {
  scope_type: string;
  scope_id: string;
  value_key: string;
  period_start: string;
  current_usage: number;
  last_updated_at: string;
}

export interface LimitCountersTable {
  key: string;
  count: number;
  expires_at: number;
}

export type NotificationStatus = 'pending' | 'sending' | 'sent' | 'failed';

/**
 * The alert e-mail outbox. `dedupe_key` is unique so that an alert raised twice (or by two
 * instances) is stored, and sent, once. `recipients` is a JSON array of e-mail addresses.
 * `claim_token` and `claimed_at` are set while one worker holds the row in `sending`.
 */
export interface NotificationsTable {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  kind: string;
  dedupe_key: string;
  recipients: string;
  subject: string;
  body_text: string;
  status: NotificationStatus;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  claim_token: string | null;
  claimed_at: string | null;
  created_at: string;
  sent_at: string | null;
}

export type InviteStatus = 'pending' | 'accepted' | 'revoked';

/**
 * An invitation to join the organisation. Only the SHA-256 of its one-time token is stored;
 * `expired` is not a stored status: a pending invite past `expires_at` (on the server's clock)
 * reads as expired.
 */
export interface InvitesTable {
  id: string;
  organisation_id: string;
  email: string;
  role: Exclude<OrgRole, 'owner'>;
  token_hash: string;
  status: InviteStatus;
  expires_at: string;
  invited_by_user_id: string | null;
  invited_by_key_id: string | null;
  accepted_at: string | null;
  accepted_user_id: string | null;
  revoked_at: string | null;
  created_at: string;
  last_updated_at: string;
  /** JSON `{scopes, name?}` for the invitee's first workspace key, or null (the scopes of their role). */
  workspace_api_key_details?: string | null;
}

/** The workspaces an invite grants, with the role in each. */
export interface InviteWorkspacesTable {
  invite_id: string;
  workspace_id: string;
  role: WorkspaceRole;
  /** Order as the invite listed them; the first active one gets the new user's first key. */
  position: number;
}

export type SecuritySettingsScope = 'organisation' | 'workspace';

/** Security settings of an organisation, or one workspace's overrides of them; `settings` is JSON. */
export interface SecuritySettingsTable {
  scope: SecuritySettingsScope;
  /** The organisation id or the workspace id, per `scope`. */
  scope_id: string;
  organisation_id: string;
  settings: string;
  created_at: string;
  last_updated_at: string;
}

/** A gateway config; its body lives in `config_versions`, and `latest_version_id` is the one in use. */
export interface ConfigsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  /** Unique among the organisation's active configs. */
  slug: string;
  name: string;
  status: 'active' | 'archived';
  latest_version_id: string;
  created_at: string;
  last_updated_at: string;
}

/** One saved body of a config (JSON text); versions count from 1 and are never changed. */
export interface ConfigVersionsTable {
  id: string;
  config_id: string;
  version: number;
  config: string;
  created_at: string;
  created_by_key_id: string | null;
}

/** A guardrail; `workspace_id` null means organisation-owned. Its checks live in `guardrail_versions`. */
export interface GuardrailsTable {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  /** Unique among the organisation's active guardrails. */
  slug: string;
  name: string;
  status: 'active' | 'archived';
  latest_version_id: string;
  /** The user who made it (or the key, when the key has no user). */
  owner_id: string;
  updated_by: string | null;
  created_at: string;
  last_updated_at: string;
}

/** One saved state of a guardrail: `checks` and `actions` are JSON text; never changed once written. */
export interface GuardrailVersionsTable {
  id: string;
  guardrail_id: string;
  version: number;
  name: string;
  checks: string;
  actions: string;
  created_at: string;
  created_by_key_id: string | null;
}

/** A folder of prompts and partials in one workspace; each workspace has one default collection. */
export interface PromptCollectionsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  /** Unique among the organisation's active collections. */
  slug: string;
  name: string;
  parent_collection_id: string | null;
  is_default: number;
  status: 'active' | 'archived';
  created_at: string;
  last_updated_at: string;
}

/** A prompt template or a prompt partial; its content lives in `prompt_versions`. */
export interface PromptsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  collection_id: string;
  kind: 'prompt' | 'partial';
  /** Unique among the organisation's active prompts (or partials). */
  slug: string;
  name: string;
  status: 'active' | 'archived';
  /** The version used when none is named (the published one). */
  default_version_id: string;
  created_at: string;
  last_updated_at: string;
}

/** One saved content of a prompt or partial; only `label_id` ever changes. JSON fields are text. */
export interface PromptVersionsTable {
  id: string;
  prompt_id: string;
  version: number;
  string: string;
  parameters: string | null;
  model: string | null;
  virtual_key: string | null;
  config_id: string | null;
  functions: string | null;
  tools: string | null;
  tool_choice: string | null;
  template_metadata: string | null;
  is_raw_template: number;
  description: string | null;
  label_id: string | null;
  status: 'active' | 'archived';
  created_at: string;
  created_by_key_id: string | null;
}

/** A label for prompt versions: organisation-wide (`workspace_id` null) or of one workspace. */
export interface PromptLabelsTable {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  name: string;
  description: string | null;
  color_code: string | null;
  /** production, staging, development: in every organisation, fixed. */
  is_universal: number;
  status: 'active' | 'archived';
  created_at: string;
  last_updated_at: string;
}

/** A bearer token an identity provider uses on the SCIM routes; only its SHA-256 is stored. */
export interface ScimTokensTable {
  id: string;
  organisation_id: string;
  name: string;
  token_hash: string;
  token_hint: string;
  status: 'active' | 'revoked';
  expires_at: string | null;
  created_by_user_id: string | null;
  created_by_key_id: string | null;
  created_at: string;
  last_updated_at: string;
  revoked_at: string | null;
}

/** A group pushed by the identity provider; its members are in `scim_group_members`. */
export interface ScimGroupsTable {
  id: string;
  organisation_id: string;
  /** Unique per organisation. */
  display_name: string;
  external_id: string | null;
  created_at: string;
  last_updated_at: string;
}

export interface ScimGroupMembersTable {
  group_id: string;
  user_id: string;
  created_at: string;
}

/**
 * Members of a SCIM group become members of a workspace with a role (`/v1/scim/workspaces`).
 * `scim_group_id` is null while the mapping names a group by `scim_group_name` that does not
 * exist yet; it is linked when a group of that name is pushed.
 */
export interface ScimWorkspaceMappingsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  scim_group_id: string | null;
  scim_group_name: string | null;
  role: WorkspaceRole;
  status: 'active' | 'archived';
  created_at: string;
  last_updated_at: string;
}
export type DeploymentType = 'production' | 'non-production';
/** A named group of gateway instances (docs/deployments.md). */
export interface DeploymentsTable {
  id: string;
  organisation_id: string;
  slug: string;
  name: string;
  description: string | null;
  type: DeploymentType;
  status: 'active' | 'archived';
  /** The config (id) its instances apply to requests that name none; null: none. */
  config_id: string | null;
  /** JSON array of {type, unit, value}, or null. */
  rate_limits: string | null;
  /** JSON UsageLimits object (with `last_reset_at`), or null. */
  usage_limits: string | null;
  /** JSON array of the workspace ids its instances serve; null: every workspace. */
  allowed_workspaces: string | null;
  created_at: string;
  last_updated_at: string;
}

/** `active` while it heartbeats (shown `gone` once silent), `stopped` after a clean shutdown, `refused` at registration. */
export type DeploymentInstanceStatus = 'active' | 'stopped' | 'refused';
export interface DeploymentInstancesTable {
  id: string;
  deployment_id: string;
  organisation_id: string;
  status: DeploymentInstanceStatus;
  /** The svcgw version the instance reported. */
  version: string;
  /** The lowest gateway version this instance, as a control plane, lets register. */
  min_gateway_version: string;
  /** Where the instance listens (its advertised URL); null when it was refused before listening. */
  address: string | null;
  hostname: string;
  pid: number;
  heartbeat_interval_ms: number;
  started_at: string;
  last_heartbeat_at: string;
  stopped_at: string | null;
  refusal_reason: string | null;
}

export type SsoProtocol = 'oidc' | 'saml';

/**
 * An organisation's single sign-on: its identity providers (JSON, no secrets), the OIDC client
 * secret (a secret-box value), how first-time users are provisioned (JSON) and the session
 * settings (`max_session_ttl`, seconds; null: the default lifetime).
 */
export interface SsoSettingsTable {
  organisation_id: string;
  oidc: string | null;
  oidc_client_secret: string | null;
  saml: string | null;
  provisioning: string;
  max_session_ttl: number | null;
  created_at: string;
  last_updated_at: string;
}

/**
 * A login under way: started by `GET /v1/sso/{protocol}/start`, completed by the identity
 * provider's answer (`user_id`, `code_hash`), consumed when the CLI exchanges the one-time code.
 * `id` is the state sent to the identity provider (OIDC `state`, SAML `RelayState`).
 */
export interface SsoLoginsTable {
  id: string;
  organisation_id: string;
  protocol: SsoProtocol;
  /** The loopback address (RFC 8252) the browser is sent back to. */
  redirect_uri: string;
  client_state: string | null;
  /** The CLI's S256 PKCE challenge, checked when it exchanges the code. */
  code_challenge: string;
  /** The workspace (id or slug) the session should act in, as asked for. */
  workspace: string | null;
  /** This server's callback (OIDC redirect_uri, SAML ACS) as sent to the identity provider. */
  callback_url: string;
  /** Sealed by the secret box. */
  oidc_code_verifier: string | null;
  oidc_nonce: string | null;
  saml_request_id: string | null;
  user_id: string | null;
  subject: string | null;
  code_hash: string | null;
  completed_at: string | null;
  consumed_at: string | null;
  created_at: string;
  expires_at: string;
}

/** A signed-in user: the token is stored as a SHA-256 hash only. */
export interface SessionsTable {
  id: string;
  organisation_id: string;
  user_id: string;
  token_hash: string;
  /** The workspace a member's session acts in, fixed at sign-in; null for admins (the organisation) and members who had none. */
  workspace_id: string | null;
  identity_provider: SsoProtocol;
  /** The identity provider's subject (OIDC `sub`, SAML NameID). */
  subject: string | null;
  /** The client that exchanged the login code (its user agent). */
  client: string | null;
  client_ip: string | null;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** `logout` (by the session itself), `revoked` (by an admin) or `user_removed`. */
  end_reason: string | null;
}

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

/**
 * A remote A2A agent (docs/agents.md): where its card is (`url`), where its JSON-RPC endpoint is
 * (`rpc_url` when set, else the one its card names, `card_rpc_url`), and how to authenticate to
 * it (`encrypted_auth`: a secret-box value of {headers} or {token}). Owned by the organisation
 * (`workspace_id` null) or one workspace. The sync columns say what the last card read found.
 */
export interface AgentIntegrationsTable {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  slug: string;
  name: string;
  description: string | null;
  url: string;
  rpc_url: string | null;
  auth_type: 'none' | 'headers' | 'bearer';
  encrypted_auth: string | null;
  /** 1: every workspace of the organisation may use it, unless disabled in agent_integration_workspaces. */
  global_workspace_access: number;
  status: 'active' | 'archived';
  owner_id: string;
  updated_by: string | null;
  created_at: string;
  last_updated_at: string;
  sync_status: 'never' | 'ok' | 'error';
  sync_error: string | null;
  last_synced_at: string | null;
  /** The card as last read (JSON text, in the A2A 1.0 shape). */
  card: string | null;
  card_rpc_url: string | null;
  agent_name: string | null;
  agent_version: string | null;
  protocol_version: string | null;
}

export interface AgentIntegrationWorkspacesTable {
  integration_id: string;
  workspace_id: string;
  enabled: number;
}

/** One skill of an integration's card; `details` is JSON {tags, examples, input_modes, output_modes}. */
export interface AgentSkillsTable {
  integration_id: string;
  skill_id: string;
  position: number;
  name: string;
  description: string | null;
  details: string;
  enabled: number;
}

/** An agent integration's instance in one workspace, served by the gateway at /v1/agents/{slug}. */
export interface AgentServersTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  integration_id: string;
  slug: string;
  name: string;
  description: string | null;
  status: 'active' | 'archived';
  default_user_access: 'allow' | 'deny';
  owner_id: string;
  updated_by: string | null;
  created_at: string;
  last_updated_at: string;
}

/** A server's own switch for one skill; no row means enabled. */
export interface AgentServerSkillsTable {
  server_id: string;
  skill_id: string;
  enabled: number;
}

/** A user's override of a server's default_user_access. */
export interface AgentServerUsersTable {
  server_id: string;
  user_id: string;
  enabled: number;
}
