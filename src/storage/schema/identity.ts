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

/** An organisation's JWT authentication (docs/jwt.md); `settings` is JSON, see auth/jwt/settings.ts. */
export interface JwtSettingsTable {
  organisation_id: string;
  /** The `iss` its tokens carry; unique, so that a token names its organisation. */
  issuer: string;
  settings: string;
  created_at: string;
  last_updated_at: string;
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

/** The identity tables, as `Database` (../schema.ts) joins them. */
export interface IdentityTables {
  organisations: OrganisationsTable;
  workspaces: WorkspacesTable;
  users: UsersTable;
  workspace_members: WorkspaceMembersTable;
  invites: InvitesTable;
  invite_workspaces: InviteWorkspacesTable;
  security_settings: SecuritySettingsTable;
  api_keys: ApiKeysTable;
  jwt_settings: JwtSettingsTable;
  sso_settings: SsoSettingsTable;
  sso_logins: SsoLoginsTable;
  sessions: SessionsTable;
}
