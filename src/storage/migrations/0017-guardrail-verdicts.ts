import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../postgres/open-postgres.js';
import { MEASURES } from './0013-analytics-rollups.js';

/**
 * Guardrails on the request log: every hook's results (`hook_results`, JSON) and the request's
 * verdict (`guardrail_verdict`: passed, failed, denied; NULL when no guardrail ran). The verdict
 * is an analytics dimension, so `analytics_rollups` gains it in its key: SQLite cannot change a
 * primary key, so the table is rebuilt (existing rows get '', no guardrail), and the metadata
 * index is rebuilt with the new column.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('hook_results', 'text').execute();
  await db.schema.alterTable('request_logs').addColumn('guardrail_verdict', 'text').execute();
  if (isPostgres(db)) {
    // PostgreSQL changes a primary key in place; its metadata index (0013) holds no dimension.
    await sql`ALTER TABLE analytics_rollups ADD COLUMN guardrail_verdict TEXT NOT NULL DEFAULT ''`.execute(db);
    await sql`ALTER TABLE analytics_rollups DROP CONSTRAINT analytics_rollups_pkey, ADD PRIMARY KEY (organisation_id, period, period_start, workspace_id, api_key_id, provider, credential_source, model, config_id, prompt_id, status_code, guardrail_verdict)`.execute(
      db,
    );
    return;
  }

  const { rows } = await sql<{ name: string }>`SELECT name FROM pragma_table_info('analytics_rollups')`.execute(db);
  const columns = rows.map((row) => `"${row.name}"`).join(', ');
  await sql`CREATE TABLE analytics_rollups_next (
    organisation_id TEXT NOT NULL,
    period INTEGER NOT NULL,
    period_start INTEGER NOT NULL,
    workspace_id TEXT NOT NULL,
    api_key_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    credential_source TEXT NOT NULL,
    model TEXT NOT NULL,
    config_id TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    guardrail_verdict TEXT NOT NULL DEFAULT '',
    ${sql.raw(MEASURES)},
    PRIMARY KEY (organisation_id, period, period_start, workspace_id, api_key_id, provider, credential_source, model, config_id, prompt_id, status_code, guardrail_verdict)
  ) WITHOUT ROWID`.execute(db);
  await sql.raw(`INSERT INTO analytics_rollups_next (${columns}) SELECT ${columns} FROM analytics_rollups`).execute(db);
  await sql`DROP TABLE analytics_rollups`.execute(db);
  await sql`ALTER TABLE analytics_rollups_next RENAME TO analytics_rollups`.execute(db);

  await sql`DROP INDEX IF EXISTS request_logs_metadata_analytics`.execute(db);
  await sql`CREATE INDEX request_logs_metadata_analytics ON request_logs (
    organisation_id, created_at, metadata, status_code, is_success, latency_ms, cost, total_tokens, prompt_tokens, completion_tokens,
    cache_status, workspace_id, api_key_id, provider, credential_source, model, config_id, prompt_id, guardrail_verdict
  ) WHERE metadata IS NOT NULL`.execute(db);
}
