import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../postgres/open-postgres.js';
import { postgresDdl } from '../postgres/column-types.js';
import { MEASURES } from './0013-analytics-rollups.js';

/**
 * Narrow rollups (docs/analytics.md#narrow-rollups): the request logs summed per workspace and
 * one dimension's value (`dimension`, `value` as text), and for each summed metadata pair also
 * per workspace alone (`dimension` ''); `metadata_key` '' holds the rows of no pair. A query
 * on one dimension reads hundreds of these where `analytics_rollups` has hundreds of thousands.
 * The primary key serves a filter on a value; the second index a grouping by the dimension.
 * `analytics_narrow_since` holds the first hour from which narrow rows are whole, set at the
 * first start. Older rollups are summed in later, a day at a time, by a background job that
 * moves the mark back (repositories/narrow-backfill.ts), so an upgrade does not wait for it. Plus a
 * partial index of request_logs for the cache savings graph and, on PostgreSQL, an index for log
 * listings filtered by model and status.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = isPostgres(db);
  await sql.raw(postgres ? postgresDdl(TABLE) : TABLE).execute(db);
  await sql`CREATE INDEX analytics_narrow_rollups_group ON analytics_narrow_rollups (organisation_id, metadata_key, metadata_value, dimension, period, period_start)`.execute(
    db,
  );
  // Only priced cache hits: the savings graph read every request of its window through the
  // organisation's index (5 s over 10 million rows); here it reads only its own.
  await sql`CREATE INDEX request_logs_cache_savings ON request_logs (organisation_id, created_at) WHERE cache_savings IS NOT NULL`.execute(
    db,
  );
  if (postgres) {
    // `GET /v1/logs` with a model and a status counts up to 10,000 matches: through the
    // organisation's index it read every row of the window (4.5 s for 7 days of 10 million
    // rows); here only the matches, in the listing's order. SQLite's planner does without.
    await sql`CREATE INDEX request_logs_org_model_status_time ON request_logs (organisation_id, model, status_code, created_at, seq)`.execute(
      db,
    );
  }
  // One row (id 1), written at the first start after this migration (markNarrowSince).
  await sql`CREATE TABLE analytics_narrow_since (id INTEGER NOT NULL PRIMARY KEY, since_hour INTEGER NOT NULL)`.execute(
    db,
  );
}

const TABLE = `CREATE TABLE analytics_narrow_rollups (
    organisation_id TEXT NOT NULL,
    metadata_key TEXT NOT NULL,
    metadata_value TEXT NOT NULL,
    dimension TEXT NOT NULL,
    value TEXT NOT NULL,
    period INTEGER NOT NULL,
    period_start INTEGER NOT NULL,
    workspace_id TEXT NOT NULL,
    ${MEASURES},
    PRIMARY KEY (organisation_id, metadata_key, metadata_value, dimension, value, period, period_start, workspace_id)
  ) WITHOUT ROWID`;

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await sql`DROP INDEX request_logs_org_model_status_time`.execute(db);
  await sql`DROP INDEX request_logs_cache_savings`.execute(db);
  await sql`DROP TABLE analytics_narrow_since`.execute(db);
  await sql`DROP TABLE analytics_narrow_rollups`.execute(db);
}
