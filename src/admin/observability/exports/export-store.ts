import type { Selectable, Updateable } from 'kysely';
import type { Db } from '../../../storage/database.js';
import type { ExportStatus, LogExportsTable } from '../tables.js';
import type { ExportField } from './export-fields.js';
import type { ExportFilters } from './export-filters.js';

export type ExportRow = Selectable<LogExportsTable>;

/** An export as the API shows it (the established gateway's ExportItem, plus progress). */
export function toExportItem(row: ExportRow) {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    filters: JSON.parse(row.filters) as ExportFilters,
    requested_data: JSON.parse(row.requested_data) as ExportField[],
    status: row.status,
    description: row.description,
    total: row.total,
    rows_written: row.rows_written,
    error: row.error,
    created_by: row.created_by,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    object: 'export' as const,
  };
}

export function createExportStore(db: Db) {
  return {
    async insert(row: ExportRow): Promise<void> {
      await db.insertInto('log_exports').values(row).execute();
    },
    find: (organisationId: string, id: string) =>
      db
        .selectFrom('log_exports')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),
    findById: (id: string) => db.selectFrom('log_exports').selectAll().where('id', '=', id).executeTakeFirst(),
    async list(filter: {
      organisationId: string;
      workspaceId?: string | undefined;
      createdBy?: string | undefined;
      limit: number;
      offset: number;
    }) {
      let query = db.selectFrom('log_exports').where('organisation_id', '=', filter.organisationId);
      if (filter.workspaceId) query = query.where('workspace_id', '=', filter.workspaceId);
      if (filter.createdBy) query = query.where('created_by', '=', filter.createdBy);
      const { n } = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await query
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(filter.limit)
        .offset(filter.offset)
        .execute();
      return { total: Number(n), rows };
    },
    async update(id: string, changes: Updateable<LogExportsTable>): Promise<void> {
      await db.updateTable('log_exports').set(changes).where('id', '=', id).execute();
    },
    /** Moves an export from one of `from` to `to`; false when it was in another status (a race lost). */
    async transition(
      id: string,
      from: readonly ExportStatus[],
      changes: Updateable<LogExportsTable> & { status: ExportStatus },
    ): Promise<boolean> {
      const result = await db
        .updateTable('log_exports')
        .set(changes)
        .where('id', '=', id)
        .where('status', 'in', from)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async status(id: string): Promise<ExportStatus | undefined> {
      return (await db.selectFrom('log_exports').select('status').where('id', '=', id).executeTakeFirst())?.status;
    },
    /** Exports waiting for or in a run, oldest start first. */
    inProgress: () =>
      db
        .selectFrom('log_exports')
        .selectAll()
        .where('status', '=', 'in_progress')
        .orderBy('started_at')
        .orderBy('id')
        .execute(),
  };
}

export type ExportStore = ReturnType<typeof createExportStore>;
