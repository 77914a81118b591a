import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../postgres/open-postgres.js';
import { postgresDdl } from '../postgres/column-types.js';
import { MEASURES } from './0013-analytics-rollups.js';

/**
 * Rollups of chosen metadata keys (docs/analytics.md#metadata-rollups): `analytics_metadata_keys`
 * lists the keys the request-log writer sums (synced from ANALYTICS_ROLLUP_METADATA_KEYS at start)
 * and from which hour their sums are whole; `analytics_metadata_rollups` holds the sums per key,
 * value and every dimension of `analytics_rollups`. Key and value lead the primary key: a filter
 * reads one value's rows together. Plus, on PostgreSQL, an index for the model-filtered graphs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = isPostgres(db);
  for (const ddl of [KEYS_TABLE, ROLLUPS_TABLE]) await sql.raw(postgres ? postgresDdl(ddl) : ddl).execute(db);
  if (postgres) {
    // A model filter (graphs, summaries) read its rows through the primary key, whose model
    // column comes after workspace, key and provider: every row of the window was tested.
    await sql`CREATE INDEX analytics_rollups_model ON analytics_rollups (organisation_id, period, model, period_start)`.execute(
      db,
    );
  }
}

const KEYS_TABLE = `CREATE TABLE analytics_metadata_keys (
    metadata_key TEXT NOT NULL PRIMARY KEY,
    since_hour INTEGER NOT NULL
  )`;

const ROLLUPS_TABLE = `CREATE TABLE analytics_metadata_rollups (
    organisation_id TEXT NOT NULL,
    metadata_key TEXT NOT NULL,
    metadata_value TEXT NOT NULL,
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
    guardrail_verdict TEXT NOT NULL,
    ${MEASURES},
    PRIMARY KEY (organisation_id, metadata_key, metadata_value, period, period_start, workspace_id, api_key_id, provider,
      credential_source, model, config_id, prompt_id, status_code, guardrail_verdict)
  ) WITHOUT ROWID`;

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await sql`DROP INDEX analytics_rollups_model`.execute(db);
  await sql`DROP TABLE analytics_metadata_rollups`.execute(db);
  await sql`DROP TABLE analytics_metadata_keys`.execute(db);
}
