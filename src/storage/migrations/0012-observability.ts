import type { Kysely } from 'kysely';

/**
 * Observability: feedback on traces, log export jobs, and small named values of background work.
 * (Analytics rollups, which outlive the raw logs, are migration 0013.)
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('feedback')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('trace_id', 'text', (c) => c.notNull())
    .addColumn('value', 'integer', (c) => c.notNull())
    .addColumn('weight', 'real', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('feedback_org_trace').on('feedback').columns(['organisation_id', 'trace_id']).execute();

  await db.schema
    .createTable('log_exports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('filters', 'text', (c) => c.notNull())
    .addColumn('requested_data', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rows_written', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('file_name', 'text')
    .addColumn('error', 'text')
    .addColumn('owner_user_id', 'text')
    .addColumn('cursor_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('until_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('log_exports_org').on('log_exports').columns(['organisation_id', 'created_at']).execute();
  await db.schema.createIndex('log_exports_status').on('log_exports').column('status').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['log_exports', 'feedback']) await db.schema.dropTable(table).execute();
}
