import type { Clock } from '../../lib/clock.js';
import { digestsEqual } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import type { SessionRepository, SessionWithUser } from '../../storage/repositories/sessions.js';
import type { OrgRole, WorkspaceRole } from '../../storage/schema.js';
import type { Principal } from '../principal.js';
import { hashSessionToken, isWellFormedSessionToken } from './session-token.js';

/** How long a session lives when the organisation sets no `session_settings.max_session_ttl`. */
export const DEFAULT_SESSION_TTL_SECONDS = 86_400;
/** `last_used_at` is written at most this often per session, not on every request. */
const TOUCH_INTERVAL_MS = 60_000;
const RE_AUTHENTICATE = 'Sign in again: svcgw login --sso.';

/** The scopes a session of a user with these roles holds (see admin/sso/session-scopes.ts). */
export type SessionScopes = (orgRole: OrgRole, workspaceRole: WorkspaceRole | null) => readonly string[];

export type SessionVerifyResult =
  | { ok: true; principal: Principal }
  | { ok: false; code: 'INVALID_SESSION' | 'SESSION_EXPIRED' | 'WORKSPACE_FORBIDDEN'; message: string };

/**
 * Authenticates session tokens (from single sign-on): the user acting, with the roles they hold
 * now. Every request reads the session, its user and the organisation's max_session_ttl in one
 * query, so that logging out, revoking, removing the user, changing their role or lowering
 * max_session_ttl takes effect at once on every instance; sessions serve the control plane,
 * never the gateway's hot path.
 */
export function createSessionVerifier(deps: { repo: SessionRepository; clock: Clock; scopes: SessionScopes }) {
  const fail = (code: 'INVALID_SESSION' | 'SESSION_EXPIRED' | 'WORKSPACE_FORBIDDEN', message: string) =>
    ({ ok: false, code, message }) as const;

  async function principalOf(row: SessionWithUser, role: OrgRole, email: string): Promise<SessionVerifyResult> {
    const base = {
      authMethod: 'session' as const,
      keyId: row.id,
      organisationId: row.organisation_id,
      userId: row.user_id,
      orgRole: role,
      rateLimits: null,
      usageLimits: null,
      keyCreatedAt: row.created_at,
      keyName: `Session of ${email}`,
      defaults: null,
    };
    // Owners and admins act on the whole organisation, as their admin keys do.
    if (role === 'owner' || role === 'admin')
      return {
        ok: true,
        principal: Object.freeze({
          ...base,
          keyType: 'organisation-service',
          workspaceId: null,
          workspaceRole: null,
          scopes: new Set(deps.scopes(role, null)),
        }),
      };
    // Null: the user had no workspace at sign-in (or was an admin then): their oldest one now.
    const memberships = await deps.repo.membershipsOf(row.user_id);
    const membership =
      row.workspace_id === null ? memberships[0] : memberships.find((m) => m.workspace_id === row.workspace_id);
    if (!membership)
      return fail(
        'WORKSPACE_FORBIDDEN',
        row.workspace_id === null
          ? `${email} belongs to no active workspace; ask an organisation admin to add you to one.`
          : `${email} is no longer a member of the workspace this session was opened for (${row.workspace_id}). ${RE_AUTHENTICATE}`,
      );
    return {
      ok: true,
      principal: Object.freeze({
        ...base,
        keyType: 'workspace-user',
        workspaceId: membership.workspace_id,
        workspaceRole: membership.role,
        scopes: new Set(deps.scopes(role, membership.role)),
      }),
    };
  }

  async function verify(raw: string): Promise<SessionVerifyResult> {
    if (!isWellFormedSessionToken(raw))
      return fail('INVALID_SESSION', `The session token is malformed. ${RE_AUTHENTICATE}`);
    const hash = hashSessionToken(raw);
    const row = await deps.repo.findByTokenHash(hash);
    if (!row || !digestsEqual(row.token_hash, hash))
      return fail('INVALID_SESSION', `The session token is not valid. ${RE_AUTHENTICATE}`);
    if (row.revoked_at !== null)
      return fail(
        'INVALID_SESSION',
        `The session was ${row.end_reason === 'logout' ? 'logged out' : 'ended by an administrator'} at ${row.revoked_at}. ${RE_AUTHENTICATE}`,
      );
    if (row.user_role === null || row.user_email === null)
      return fail('INVALID_SESSION', `The session's user no longer exists. ${RE_AUTHENTICATE}`);
    if (row.user_deactivated_at)
      return fail('INVALID_SESSION', `The session's user was deactivated by the identity provider (SCIM).`);
    const now = deps.clock.now();
    const created = Date.parse(row.created_at);
    // The organisation's current setting applies to sessions opened before it was lowered.
    if (row.max_session_ttl !== null && now - created >= row.max_session_ttl * 1000)
      return fail(
        'SESSION_EXPIRED',
        `The session has expired: it is older than the organisation's session_settings.max_session_ttl (${row.max_session_ttl} s). Re-authenticate: svcgw login --sso.`,
      );
    if (now >= Date.parse(row.expires_at))
      return fail('SESSION_EXPIRED', `The session expired at ${row.expires_at}. Re-authenticate: svcgw login --sso.`);
    if (row.last_used_at === null || now - Date.parse(row.last_used_at) >= TOUCH_INTERVAL_MS)
      await deps.repo.touch(row.id, new Date(now).toISOString());
    return principalOf(row, row.user_role, row.user_email);
  }

  return {
    verify,
    /** The session's principal, or the AppError (401 INVALID_SESSION or SESSION_EXPIRED, 403) to answer with. */
    async authenticate(raw: string): Promise<Principal> {
      const result = await verify(raw);
      if (!result.ok) throw new AppError(result.code, result.message);
      return result.principal;
    },
  };
}

export type SessionVerifier = ReturnType<typeof createSessionVerifier>;
