import { sql, type Insertable } from 'kysely';
import type { Db } from '../database.js';
import type { ApiKeysTable, InvitesTable, InviteWorkspacesTable, UsersTable, WorkspaceRole } from '../schema.js';
import { pageOf } from './paging.js';

export type InviteRow = InvitesTable;
export type InviteWorkspaceRow = InviteWorkspacesTable;

/** What an invite reads as: `expired` is a pending invite past `expires_at`, never a stored status. */
export type InviteState = 'pending' | 'accepted' | 'revoked' | 'expired';

export interface InviteFilter {
  organisationId: string;
  /** Only invites that grant this workspace (what a workspace key sees). */
  workspaceId?: string | undefined;
  state?: InviteState | undefined;
  email?: string | undefined;
  role?: InviteRow['role'] | undefined;
  /** The present, as an ISO string, to tell pending from expired. */
  now: string;
  limit: number;
  offset: number;
}

export interface InviteAcceptance {
  inviteId: string;
  now: string;
  user: Insertable<UsersTable>;
  memberships: Array<{ workspaceId: string; role: WorkspaceRole }>;
  /** The first API key; none when the invite is accepted by signing in with single sign-on. */
  key: Insertable<ApiKeysTable> | null;
}

export function createInviteRepository(db: Db) {
  return {
    insert: (row: InviteRow, workspaces: InviteWorkspaceRow[]) =>
      db.transaction().execute(async (trx) => {
        await trx.insertInto('invites').values(row).execute();
        for (const workspace of workspaces) await trx.insertInto('invite_workspaces').values(workspace).execute();
      }),

    findById: (organisationId: string, id: string) =>
      db
        .selectFrom('invites')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    findByTokenHash: (tokenHash: string) =>
      db.selectFrom('invites').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst(),

    /** A pending, unexpired invite for this address, if any (addresses match without regard to case). */
    findOpenForEmail: (organisationId: string, email: string, now: string) =>
      db
        .selectFrom('invites')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where(sql<string>`lower(email)`, '=', email.toLowerCase())
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .executeTakeFirst(),

    workspacesOf: async (inviteIds: string[]): Promise<Map<string, InviteWorkspaceRow[]>> => {
      const byInvite = new Map<string, InviteWorkspaceRow[]>(inviteIds.map((id) => [id, []]));
      if (inviteIds.length === 0) return byInvite;
      const rows = await db
        .selectFrom('invite_workspaces')
        .selectAll()
        .where('invite_id', 'in', inviteIds)
        .orderBy('invite_id')
        .orderBy('position')
        .execute();
      for (const row of rows) byInvite.get(row.invite_id)?.push(row);
      return byInvite;
    },

    list: async (filter: InviteFilter) => {
      let query = db.selectFrom('invites').where('organisation_id', '=', filter.organisationId);
      if (filter.workspaceId) {
        const workspaceId = filter.workspaceId;
        query = query.where((eb) =>
          eb.exists(
            eb
              .selectFrom('invite_workspaces as iw')
              .select('iw.invite_id')
              .whereRef('iw.invite_id', '=', 'invites.id')
              .where('iw.workspace_id', '=', workspaceId),
          ),
        );
      }
      if (filter.state === 'pending')
        query = query.where('status', '=', 'pending').where('expires_at', '>', filter.now);
      else if (filter.state === 'expired')
        query = query.where('status', '=', 'pending').where('expires_at', '<=', filter.now);
      else if (filter.state) query = query.where('status', '=', filter.state);
      if (filter.email) query = query.where(sql<string>`lower(email)`, '=', filter.email.toLowerCase());
      if (filter.role) query = query.where('role', '=', filter.role);
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), filter);
    },

    /** Changes a pending invite only; false when it was no longer pending. */
    updatePending: async (
      id: string,
      patch: Partial<Pick<InviteRow, 'token_hash' | 'expires_at' | 'status' | 'revoked_at' | 'last_updated_at'>>,
    ) => {
      const result = await db
        .updateTable('invites')
        .set(patch)
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /**
     * Accepts an invite in one transaction: the invite turns accepted only if it is still pending
     * and unexpired (so that two concurrent accepts make one user), then the user, the memberships
     * and the first API key (if any) are created. False when the invite was no longer acceptable.
     */
    accept: (acceptance: InviteAcceptance) =>
      db.transaction().execute(async (trx) => {
        const claimed = await trx
          .updateTable('invites')
          .set({
            status: 'accepted',
            accepted_at: acceptance.now,
            accepted_user_id: acceptance.user.id,
            last_updated_at: acceptance.now,
          })
          .where('id', '=', acceptance.inviteId)
          .where('status', '=', 'pending')
          .where('expires_at', '>', acceptance.now)
          .executeTakeFirst();
        if (Number(claimed.numUpdatedRows) !== 1) return false;
        await trx.insertInto('users').values(acceptance.user).execute();
        for (const membership of acceptance.memberships) {
          await trx
            .insertInto('workspace_members')
            .values({
              workspace_id: membership.workspaceId,
              user_id: acceptance.user.id,
              role: membership.role,
              created_at: acceptance.now,
              last_updated_at: acceptance.now,
            })
            .execute();
        }
        if (acceptance.key) await trx.insertInto('api_keys').values(acceptance.key).execute();
        return true;
      }),
  };
}

export type InviteRepository = ReturnType<typeof createInviteRepository>;
