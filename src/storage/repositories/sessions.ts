import type { Db } from '../database.js';
import type { OrgRole, SessionsTable, WorkspaceRole } from '../schema.js';
import { pageOf } from './paging.js';

export type SessionRow = SessionsTable;

/** What reading a session row reads as: `expired` is never stored, it is worked out from the clock. */
export type SessionState = 'active' | 'expired' | 'revoked';

/** A session with what authenticating it needs: its user (null once removed) and the organisation's TTL. */
export interface SessionWithUser extends SessionRow {
  user_email: string | null;
  user_role: OrgRole | null;
  /** Set when the identity provider deprovisioned the user over SCIM. */
  user_deactivated_at?: string | null;
  max_session_ttl: number | null;
}

export interface SessionFilter {
  organisationId: string;
  userId?: string | undefined;
  state?: SessionState | undefined;
  /** The present, as an ISO string, to tell active from expired. */
  now: string;
  /** Sessions created before this (ISO) are past the organisation's max_session_ttl; null: none is. */
  createdBefore: string | null;
  limit: number;
  offset: number;
}

export function createSessionRepository(db: Db) {
  return {
    insert: (row: SessionRow) => db.insertInto('sessions').values(row).execute(),

    /** One query for the auth hook: the session, its user and the organisation's max_session_ttl. */
    findByTokenHash: (tokenHash: string): Promise<SessionWithUser | undefined> =>
      db
        .selectFrom('sessions as s')
        .leftJoin('users as u', (join) =>
          join.onRef('u.id', '=', 's.user_id').onRef('u.organisation_id', '=', 's.organisation_id'),
        )
        .leftJoin('sso_settings as st', 'st.organisation_id', 's.organisation_id')
        .selectAll('s')
        .select([
          'u.email as user_email',
          'u.role as user_role',
          'u.deactivated_at as user_deactivated_at',
          'st.max_session_ttl',
        ])
        .where('s.token_hash', '=', tokenHash)
        .executeTakeFirst(),

    findById: (organisationId: string, id: string) =>
      db
        .selectFrom('sessions')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    /** The user's workspaces with their role, oldest membership first (the default of a member's session). */
    membershipsOf: (userId: string): Promise<Array<{ workspace_id: string; role: WorkspaceRole }>> =>
      db
        .selectFrom('workspace_members as m')
        .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
        .select(['m.workspace_id', 'm.role'])
        .where('m.user_id', '=', userId)
        .where('w.status', '=', 'active')
        .orderBy('m.created_at')
        .orderBy('m.workspace_id')
        .execute(),

    list: async (filter: SessionFilter) => {
      let query = db.selectFrom('sessions').where('organisation_id', '=', filter.organisationId);
      if (filter.userId) query = query.where('user_id', '=', filter.userId);
      const createdBefore = filter.createdBefore;
      if (filter.state === 'revoked') query = query.where('revoked_at', 'is not', null);
      else if (filter.state === 'active') {
        query = query.where('revoked_at', 'is', null).where('expires_at', '>', filter.now);
        if (createdBefore !== null) query = query.where('created_at', '>', createdBefore);
      } else if (filter.state === 'expired') {
        query = query
          .where('revoked_at', 'is', null)
          .where((eb) =>
            createdBefore === null
              ? eb('expires_at', '<=', filter.now)
              : eb.or([eb('expires_at', '<=', filter.now), eb('created_at', '<=', createdBefore)]),
          );
      }
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id'), filter);
    },

    /** Ends a session that has not ended yet; false when it already had. */
    revoke: async (id: string, stamp: string, reason: string): Promise<boolean> => {
      const result = await db
        .updateTable('sessions')
        .set({ revoked_at: stamp, end_reason: reason })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    touch: (id: string, stamp: string) =>
      db.updateTable('sessions').set({ last_used_at: stamp }).where('id', '=', id).execute(),
  };
}

export type SessionRepository = ReturnType<typeof createSessionRepository>;
