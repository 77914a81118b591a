import { sql } from 'kysely';
import type { Db } from '../database.js';
import type { OrgRole, UsersTable } from '../schema.js';
import { pageOf } from './paging.js';

export type UserRow = UsersTable;

export interface UserFilter {
  organisationId: string;
  role?: OrgRole | undefined;
  email?: string | undefined;
  limit: number;
  offset: number;
}

export function createUserRepository(db: Db) {
  return {
    findById: (organisationId: string, id: string) =>
      db
        .selectFrom('users')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    /** E-mail addresses match without regard to case, as people type them. */
    findByEmail: (organisationId: string, email: string) =>
      db
        .selectFrom('users')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where(sql<string>`lower(email)`, '=', email.toLowerCase())
        .executeTakeFirst(),

    list: async (filter: UserFilter) => {
      let query = db.selectFrom('users').where('organisation_id', '=', filter.organisationId);
      if (filter.role) query = query.where('role', '=', filter.role);
      if (filter.email) query = query.where(sql<string>`lower(email)`, '=', filter.email.toLowerCase());
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), filter);
    },

    /** The workspaces each user belongs to, for the user objects of one page. */
    workspaceIdsOf: async (userIds: string[]): Promise<Map<string, string[]>> => {
      const byUser = new Map<string, string[]>(userIds.map((id) => [id, []]));
      if (userIds.length === 0) return byUser;
      const rows = await db
        .selectFrom('workspace_members')
        .select(['user_id', 'workspace_id'])
        .where('user_id', 'in', userIds)
        .orderBy('created_at')
        .orderBy('workspace_id')
        .execute();
      for (const row of rows) byUser.get(row.user_id)?.push(row.workspace_id);
      return byUser;
    },

    countOwners: async (organisationId: string): Promise<number> => {
      const { total } = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .where('organisation_id', '=', organisationId)
        .where('role', '=', 'owner')
        .executeTakeFirstOrThrow();
      return Number(total);
    },

    update: (id: string, patch: Partial<Pick<UserRow, 'role' | 'first_name' | 'last_name' | 'last_updated_at'>>) =>
      db.updateTable('users').set(patch).where('id', '=', id).execute(),

    /**
     * Removes a user in one transaction: their memberships (SCIM groups included) go, every key
     * they own is revoked and detached from them (the key rows stay, so audit records still
     * resolve), their sessions end, then the user row.
     */
    remove: (id: string, stamp: string) =>
      db.transaction().execute(async (trx) => {
        await trx.deleteFrom('scim_group_members').where('user_id', '=', id).execute();
        await trx.deleteFrom('workspace_members').where('user_id', '=', id).execute();
        await trx
          .updateTable('api_keys')
          .set({ status: 'revoked', last_updated_at: stamp })
          .where('user_id', '=', id)
          .where('status', '!=', 'revoked')
          .execute();
        await trx.updateTable('api_keys').set({ user_id: null }).where('user_id', '=', id).execute();
        await trx
          .updateTable('sessions')
          .set({ revoked_at: stamp, end_reason: 'user_removed' })
          .where('user_id', '=', id)
          .where('revoked_at', 'is', null)
          .execute();
        await trx.deleteFrom('users').where('id', '=', id).execute();
      }),
  };
}

export type UserRepository = ReturnType<typeof createUserRepository>;
