import type { Db } from '../database.js';
import type { ConfigsTable, ConfigVersionsTable } from '../schema.js';
import { nextVersionNumber } from './versions.js';
import { pageOf } from './paging.js';
import { sluggedRowLookups } from './slugged-rows.js';

export type ConfigRow = ConfigsTable;
export type ConfigVersionRow = ConfigVersionsTable;

export interface ConfigFilter {
  organisationId: string;
  workspaceId?: string;
  status?: ConfigRow['status'];
  limit: number;
  offset: number;
}

export function createConfigRepository(db: Db) {
  return {
    /** Inserts a config with its first version in one transaction. */
    insert: (row: ConfigRow, version: ConfigVersionRow) =>
      db.transaction().execute(async (trx) => {
        await trx.insertInto('configs').values(row).execute();
        await trx.insertInto('config_versions').values(version).execute();
      }),

    ...sluggedRowLookups(db, 'configs'),

    /** A page of configs, each with the number of its latest version. */
    list: async (filter: ConfigFilter) => {
      let query = db
        .selectFrom('configs')
        .innerJoin('config_versions as v', 'v.id', 'configs.latest_version_id')
        .where('configs.organisation_id', '=', filter.organisationId);
      if (filter.workspaceId) query = query.where('configs.workspace_id', '=', filter.workspaceId);
      if (filter.status) query = query.where('configs.status', '=', filter.status);
      return pageOf(
        query,
        (q) =>
          q
            .selectAll('configs')
            .select('v.version as version')
            .select('v.created_by_key_id as updated_by')
            .select((eb) =>
              eb
                .selectFrom('config_versions as first')
                .select('first.created_by_key_id')
                .whereRef('first.config_id', '=', 'configs.id')
                .where('first.version', '=', 1)
                .as('owner_id'),
            )
            .orderBy('configs.created_at', 'asc')
            .orderBy('configs.id'),
        filter,
      );
    },

    update: (id: string, patch: Partial<ConfigRow>) =>
      db.updateTable('configs').set(patch).where('id', '=', id).execute(),

    /** Adds a version and makes it the latest, numbering it after the highest one so far. */
    addVersion: (
      configId: string,
      version: Omit<ConfigVersionRow, 'version' | 'config_id'>,
      patch: Partial<ConfigRow>,
    ) =>
      db.transaction().execute(async (trx) => {
        const row: ConfigVersionRow = {
          ...version,
          config_id: configId,
          version: await nextVersionNumber(trx, 'config_versions', configId),
        };
        await trx.insertInto('config_versions').values(row).execute();
        await trx
          .updateTable('configs')
          .set({ ...patch, latest_version_id: row.id })
          .where('id', '=', configId)
          .execute();
        return row;
      }),

    findVersion: (configId: string, versionId: string) =>
      db
        .selectFrom('config_versions')
        .selectAll()
        .where('config_id', '=', configId)
        .where('id', '=', versionId)
        .executeTakeFirst(),

    findVersionNumber: (configId: string, version: number) =>
      db
        .selectFrom('config_versions')
        .selectAll()
        .where('config_id', '=', configId)
        .where('version', '=', version)
        .executeTakeFirst(),

    /** Versions newest first. */
    listVersions: (configId: string) =>
      db
        .selectFrom('config_versions')
        .selectAll()
        .where('config_id', '=', configId)
        .orderBy('version', 'desc')
        .execute(),
  };
}

export type ConfigRepository = ReturnType<typeof createConfigRepository>;
