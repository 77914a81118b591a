import type { Db } from '../database.js';
import type { ModelAliasesTable } from '../schema.js';
import { isUuid } from '../../lib/ids.js';

export type ModelAliasRow = ModelAliasesTable;

export function createModelAliasRepository(db: Db) {
  return {
    insert: (row: ModelAliasRow) => db.insertInto('model_aliases').values(row).execute(),

    update: (id: string, patch: Partial<ModelAliasRow>) =>
      db.updateTable('model_aliases').set(patch).where('id', '=', id).execute(),

    remove: (id: string) => db.deleteFrom('model_aliases').where('id', '=', id).execute(),

    /** By id, or by name within one scope (a workspace id, or the organisation id). */
    find: (organisationId: string, idOrName: string, scopeId: string) => {
      const query = db.selectFrom('model_aliases').selectAll().where('organisation_id', '=', organisationId);
      return (
        isUuid(idOrName)
          ? query.where('id', '=', idOrName.toLowerCase())
          : query.where('scope_id', '=', scopeId).where('name', '=', idOrName)
      ).executeTakeFirst();
    },

    /** Aliases of the given scopes (a workspace's own and the organisation's), by name. */
    listScopes: (organisationId: string, scopeIds: readonly string[]) =>
      db
        .selectFrom('model_aliases')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('scope_id', 'in', scopeIds)
        .orderBy('name')
        .orderBy('scope_id')
        .execute(),

    listAll: (organisationId: string) =>
      db
        .selectFrom('model_aliases')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .orderBy('name')
        .orderBy('scope_id')
        .execute(),
  };
}

export type ModelAliasRepository = ReturnType<typeof createModelAliasRepository>;
