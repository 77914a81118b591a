import type { RateLimitEntry, UsageLimits } from '../limits/schemas.js';
import type { ApiKeyType, OrgRole, WorkspaceRole } from '../storage/schema.js';

/** Who is calling: an API key, with the roles of the user it belongs to. */
export interface Principal {
  /**
   * How the caller proved who it is: an svcgw API key (absent means this), a JWT validated
   * against the organisation's JWKS (docs/jwt.md), a session from single sign-on (docs/sso.md),
   * or a SCIM token of an identity provider (docs/scim.md; SCIM routes only, no scopes, no user).
   * JWT, session and SCIM principals fill `keyId` with the token's or session's own id, so logs,
   * audit records and per-key limits name them the way they name keys.
   */
  authMethod?: 'api_key' | 'jwt' | 'session' | 'scim';
  keyId: string;
  keyType: ApiKeyType;
  organisationId: string;
  /** Null for admin (organisation) keys. */
  workspaceId: string | null;
  userId: string | null;
  orgRole: OrgRole | null;
  /** The user's role in the key's workspace, when the key is a workspace key. */
  workspaceRole: WorkspaceRole | null;
  scopes: ReadonlySet<string>;
  /** The key's own rate limits and budget (with `last_reset_at`, kept by the reset worker). */
  rateLimits: readonly RateLimitEntry[] | null;
  usageLimits: (UsageLimits & { last_reset_at?: string | null }) | null;
  keyCreatedAt: string;
  keyName: string;
  /** The key's `alert_emails`: its budget alerts also go to them. */
  alertEmails?: readonly string[];
  /**
   * Set when the server itself acts for the key's user with a key it never stores (the startup
   * file of `svcgw serve --apply`): audited as the system, on behalf of that user.
   */
  via?: string;
  /** The key's defaults for gateway requests: metadata, a config id, and whether requests may name another config. */
  defaults: {
    metadata: Readonly<Record<string, string>>;
    config_id: string | null;
    allow_config_override: boolean;
    /** Model patterns the key may use (docs/models.md); absent or null: any. */
    allowed_models?: readonly string[] | null;
  } | null;
  /** The key's workspace's `defaults.allowed_models`; absent or null: any. */
  workspaceAllowedModels?: readonly string[] | null;
  /**
   * Who the caller is, as gateway request logs name them (metadata `_user`, which the request's
   * own metadata cannot replace): a JWT's e-mail or user claim. Absent for API keys.
   */
  userLabel?: string;
}

export type KeyKind = 'admin' | 'workspace';

export const keyKind = (principal: Pick<Principal, 'keyType'>): KeyKind =>
  principal.keyType === 'organisation-service' ? 'admin' : 'workspace';

export const isOrgAdmin = (principal: Principal): boolean =>
  principal.orgRole === 'owner' || principal.orgRole === 'admin';
