import type { Kysely } from 'kysely';

/** Request logs of the gateway: one row per request, indexed for the logs API filters. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('request_logs')
    .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('trace_id', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text')
    .addColumn('credential_source', 'text')
    .addColumn('model', 'text')
    .addColumn('endpoint_type', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('is_success', 'integer', (c) => c.notNull())
    .addColumn('is_stream', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('latency_ms', 'real', (c) => c.notNull())
    .addColumn('ttfb_ms', 'real')
    .addColumn('prompt_tokens', 'integer')
    .addColumn('completion_tokens', 'integer')
    .addColumn('cached_tokens', 'integer')
    .addColumn('total_tokens', 'integer')
    .addColumn('cost', 'real')
    .addColumn('cost_currency', 'text', (c) => c.notNull())
    .addColumn('cache_status', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .addColumn('request_body', 'text')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('request_logs_org_time')
    .on('request_logs')
    .columns(['organisation_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('request_logs_workspace_time')
    .on('request_logs')
    .columns(['workspace_id', 'created_at'])
    .execute();
  await db.schema.createIndex('request_logs_trace').on('request_logs').column('trace_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_logs').execute();
}
