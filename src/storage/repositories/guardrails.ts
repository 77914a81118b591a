import type { Db } from '../database.js';
import type { GuardrailsTable, GuardrailVersionsTable } from '../schema.js';
import { nextVersionNumber } from './versions.js';
import { pageOf } from './paging.js';
import { sluggedRowLookups } from './slugged-rows.js';

export type GuardrailRow = GuardrailsTable;
export type GuardrailVersionRow = GuardrailVersionsTable;

export interface GuardrailFilter {
  organisationId: string;
  /** Guardrails a workspace can use: its own and the organisation's. */
  usableInWorkspaceId?: string;
  /** Only organisation-owned guardrails. */
  organisationOwnedOnly?: boolean;
  status?: GuardrailRow['status'];
  limit: number;
  offset: number;
}

export function createGuardrailRepository(db: Db) {
  return {
    /** Inserts a guardrail with its first version in one transaction. */
    insert: (row: GuardrailRow, version: GuardrailVersionRow) =>
      db.transaction().execute(async (trx) => {
        await trx.insertInto('guardrails').values(row).execute();
        await trx.insertInto('guardrail_versions').values(version).execute();
      }),

    ...sluggedRowLookups(db, 'guardrails'),

    list: async (filter: GuardrailFilter) => {
      let query = db.selectFrom('guardrails').where('organisation_id', '=', filter.organisationId);
      const workspaceId = filter.usableInWorkspaceId;
      if (workspaceId !== undefined)
        query = query.where((eb) => eb.or([eb('workspace_id', '=', workspaceId), eb('workspace_id', 'is', null)]));
      if (filter.organisationOwnedOnly) query = query.where('workspace_id', 'is', null);
      if (filter.status) query = query.where('status', '=', filter.status);
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), filter);
    },

    update: (id: string, patch: Partial<GuardrailRow>) =>
      db.updateTable('guardrails').set(patch).where('id', '=', id).execute(),

    /** Adds a version and makes it the latest, numbering it after the highest one so far. */
    addVersion: (
      guardrailId: string,
      version: Omit<GuardrailVersionRow, 'version' | 'guardrail_id'>,
      patch: Partial<GuardrailRow>,
    ) =>
      db.transaction().execute(async (trx) => {
        const row: GuardrailVersionRow = {
          ...version,
          guardrail_id: guardrailId,
          version: await nextVersionNumber(trx, 'guardrail_versions', guardrailId),
        };
        await trx.insertInto('guardrail_versions').values(row).execute();
        await trx
          .updateTable('guardrails')
          .set({ ...patch, latest_version_id: row.id })
          .where('id', '=', guardrailId)
          .execute();
        return row;
      }),

    findVersion: (guardrailId: string, versionId: string) =>
      db
        .selectFrom('guardrail_versions')
        .selectAll()
        .where('guardrail_id', '=', guardrailId)
        .where('id', '=', versionId)
        .executeTakeFirst(),

    /** Versions newest first. */
    listVersions: (guardrailId: string) =>
      db
        .selectFrom('guardrail_versions')
        .selectAll()
        .where('guardrail_id', '=', guardrailId)
        .orderBy('version', 'desc')
        .execute(),
  };
}

export type GuardrailRepository = ReturnType<typeof createGuardrailRepository>;
