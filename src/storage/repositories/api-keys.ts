import type { Db } from '../database.js';
import type { ApiKeysTable, OrgRole, WorkspaceRole } from '../schema.js';

export type ApiKeyRow = ApiKeysTable;

export interface ApiKeyWithRoles extends ApiKeyRow {
  org_role: OrgRole | null;
  workspace_role: WorkspaceRole | null;
}

export function createApiKeyRepository(db: Db) {
  return {
    insert: (row: ApiKeyRow) => db.insertInto('api_keys').values(row).execute(),

    /** The key and the roles of its user, found by the hash of the raw key. */
    findByHashWithRoles: (keyHash: string): Promise<ApiKeyWithRoles | undefined> =>
      db
        .selectFrom('api_keys as k')
        .leftJoin('users as u', 'u.id', 'k.user_id')
        .leftJoin('workspace_members as m', (join) => join.onRef('m.workspace_id', '=', 'k.workspace_id').onRef('m.user_id', '=', 'k.user_id'))
        .selectAll('k')
        .select(['u.role as org_role', 'm.role as workspace_role'])
        .where('k.key_hash', '=', keyHash)
        .executeTakeFirst(),

    findById: (organisationId: string, id: string) =>
      db.selectFrom('api_keys').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst(),

    list: async (filter: { organisationId: string; workspaceId?: string; limit: number; offset: number }) => {
      let query = db.selectFrom('api_keys').where('organisation_id', '=', filter.organisationId).where('status', '!=', 'revoked');
      if (filter.workspaceId) query = query.where('workspace_id', '=', filter.workspaceId);
      const [{ total }] = (await query.select((eb) => eb.fn.countAll<number>().as('total')).execute()) as [{ total: number }];
      const rows = await query.selectAll().orderBy('created_at', 'asc').orderBy('id').limit(filter.limit).offset(filter.offset).execute();
      return { total: Number(total), rows };
    },

    update: (id: string, patch: Partial<ApiKeyRow>) => db.updateTable('api_keys').set(patch).where('id', '=', id).execute(),
  };
}

export type ApiKeyRepository = ReturnType<typeof createApiKeyRepository>;
