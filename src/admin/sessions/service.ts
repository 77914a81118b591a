import type { Principal } from '../../auth/principal.js';
import { DEFAULT_SESSION_TTL_SECONDS } from '../../auth/sessions/session-verifier.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { SessionRepository, SessionRow, SessionState } from '../../storage/repositories/sessions.js';
import type { SsoRepository } from '../../storage/repositories/sso.js';
import { pageWindow } from '../shared/pagination.js';
import { DEFAULT_PROVISIONING } from '../sso/schemas.js';
import type { ListSessionsQuery, SessionObject, SessionSettingsBody } from './schemas.js';

/** What a session reads as at `now`, under the organisation's max_session_ttl (seconds, or null). */
export function sessionState(row: SessionRow, maxSessionTtl: number | null, now: number): SessionState {
  if (row.revoked_at !== null) return 'revoked';
  if (now >= Date.parse(row.expires_at)) return 'expired';
  if (maxSessionTtl !== null && now - Date.parse(row.created_at) >= maxSessionTtl * 1000) return 'expired';
  return 'active';
}

export function toSessionObject(row: SessionRow, maxSessionTtl: number | null, now: number): SessionObject {
  return {
    object: 'session',
    id: row.id,
    user_id: row.user_id,
    workspace_id: row.workspace_id,
    identity_provider: row.identity_provider,
    subject: row.subject,
    client: row.client,
    client_ip: row.client_ip,
    status: sessionState(row, maxSessionTtl, now),
    created_at: row.created_at,
    expires_at: row.expires_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
    end_reason: row.end_reason,
  };
}

/**
 * Sessions as organisation owners and admins see them (list, read, revoke), logging out (a
 * session ends itself), and the organisation's session settings.
 */
export function createSessionService(deps: { sessions: SessionRepository; sso: SsoRepository; clock: Clock }) {
  const nowIso = () => new Date(deps.clock.now()).toISOString();
  const maxTtlOf = async (organisationId: string) =>
    (await deps.sso.findSettings(organisationId))?.max_session_ttl ?? null;

  async function find(principal: Principal, id: string): Promise<SessionRow> {
    const row = isUuid(id) ? await deps.sessions.findById(principal.organisationId, id) : undefined;
    if (!row) throw notFound('Session', 'sessionId');
    return row;
  }

  async function settingsObject(organisationId: string) {
    const row = await deps.sso.findSettings(organisationId);
    const maxSessionTtl = row?.max_session_ttl ?? null;
    return {
      object: 'session_settings' as const,
      organisation_id: organisationId,
      session_settings: { max_session_ttl: maxSessionTtl },
      session_ttl: maxSessionTtl ?? DEFAULT_SESSION_TTL_SECONDS,
      last_updated_at: row?.last_updated_at ?? null,
    };
  }

  return {
    async list(principal: Principal, query: ListSessionsQuery) {
      const maxSessionTtl = await maxTtlOf(principal.organisationId);
      const now = deps.clock.now();
      const { total, rows } = await deps.sessions.list({
        organisationId: principal.organisationId,
        userId: query.user_id,
        state: query.status,
        now: new Date(now).toISOString(),
        createdBefore: maxSessionTtl === null ? null : new Date(now - maxSessionTtl * 1000).toISOString(),
        ...pageWindow(query),
      });
      return { total, data: rows.map((row) => toSessionObject(row, maxSessionTtl, now)) };
    },

    async get(principal: Principal, id: string): Promise<SessionObject> {
      const row = await find(principal, id);
      return toSessionObject(row, await maxTtlOf(principal.organisationId), deps.clock.now());
    },

    /** Ends a session at once; ending one that has ended already changes nothing. */
    async revoke(principal: Principal, id: string): Promise<SessionObject> {
      const row = await find(principal, id);
      const stamp = nowIso();
      const ended = await deps.sessions.revoke(row.id, stamp, 'revoked');
      const after = ended ? { ...row, revoked_at: stamp, end_reason: 'revoked' } : row;
      return toSessionObject(after, await maxTtlOf(principal.organisationId), deps.clock.now());
    },

    /** The caller's own session ends (`svcgw logout`). */
    async logout(principal: Principal): Promise<SessionObject> {
      if (principal.authMethod !== 'session')
        throw new AppError(
          'INVALID_REQUEST',
          'Only a session logs out; this request authenticated with an API key (revoke keys with DELETE /v1/api-keys/{apiKeyId}).',
        );
      const row = await find(principal, principal.keyId);
      const stamp = nowIso();
      await deps.sessions.revoke(row.id, stamp, 'logout');
      return toSessionObject({ ...row, revoked_at: stamp, end_reason: 'logout' }, null, deps.clock.now());
    },

    settings: settingsObject,

    async updateSettings(organisationId: string, body: SessionSettingsBody) {
      const ttl = body.session_settings.max_session_ttl;
      await deps.sso.saveMaxSessionTtl(organisationId, ttl, JSON.stringify(DEFAULT_PROVISIONING), nowIso());
      return settingsObject(organisationId);
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
