import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../postgres/open-postgres.js';
import { postgresDdl } from '../postgres/column-types.js';
import {
  NARROW_ROLLUP_KEY,
  narrowFromRollups,
  ROLLUP_PERIODS,
  rollupColumns,
  rollupValues,
} from '../repositories/request-log-rollups.js';
import { MEASURES } from './0013-analytics-rollups.js';

/**
 * Narrow rollups (docs/analytics.md#narrow-rollups): the request logs summed per workspace and
 * one dimension's value (`dimension`, `value` as text), and for each summed metadata pair also
 * per workspace alone (`dimension` ''); `metadata_key` '' holds the rows of no pair. A query
 * on one dimension reads hundreds of these where `analytics_rollups` has hundreds of thousands.
 * The primary key serves a filter on a value; the second index a grouping by the dimension. The
 * rollups already written are summed in here from `analytics_rollups` and
 * `analytics_metadata_rollups`, exactly (they hold the same sums, more finely cut). Plus a
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
  await backfill(db as Kysely<Record<string, Record<string, unknown>>>);
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

/** Rows per INSERT of the backfill (25 values each). */
const ROWS_PER_INSERT = 500;

/**
 * Sums the stored rollups into narrow rows, one organisation (and metadata pair) and one stretch
 * of period starts at a time: every narrow row is made whole from one read, and memory stays
 * bounded by a day of hourly rollups.
 */
export async function backfill(db: Kysely<Record<string, Record<string, unknown>>>): Promise<void> {
  const organisations = await sql<{
    id: string;
  }>`SELECT DISTINCT organisation_id AS id FROM analytics_key_rollups`.execute(db);
  const pairs = await sql<{
    organisation_id: string;
    metadata_key: string;
    metadata_value: string;
  }>`SELECT DISTINCT organisation_id, metadata_key, metadata_value FROM analytics_metadata_rollups`.execute(db);
  const sources = [
    ...organisations.rows.map((o) => ({ table: 'analytics_rollups', where: { organisation_id: o.id }, pair: false })),
    ...pairs.rows.map((p) => ({ table: 'analytics_metadata_rollups', where: p, pair: true })),
  ];
  for (const { table, where, pair } of sources) {
    for (const period of ROLLUP_PERIODS) {
      let query = db.selectFrom(table).select(['period_start']).where('period', '=', period);
      for (const [column, value] of Object.entries(where)) query = query.where(column, '=', value);
      const bounds = await query
        .clearSelect()
        .select((eb) => [eb.fn.min('period_start').as('first'), eb.fn.max('period_start').as('last')])
        .executeTakeFirst();
      if (bounds?.first === null || bounds?.first === undefined) continue;
      const stretch = period === 1 ? 24 : period;
      for (let start = Number(bounds.first); start <= Number(bounds.last); start += stretch) {
        const stored = await query
          .clearSelect()
          .selectAll()
          .where('period_start', '>=', start)
          .where('period_start', '<', start + stretch)
          .execute();
        const narrow = narrowFromRollups(stored, pair, period);
        const columns = rollupColumns(NARROW_ROLLUP_KEY);
        for (let at = 0; at < narrow.length; at += ROWS_PER_INSERT) {
          const values = narrow.slice(at, at + ROWS_PER_INSERT).map((s) => {
            const row = rollupValues(s);
            return Object.fromEntries(columns.map((column, i) => [column, row[i]]));
          });
          await db.insertInto('analytics_narrow_rollups').values(values).execute();
        }
      }
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await sql`DROP INDEX request_logs_org_model_status_time`.execute(db);
  await sql`DROP INDEX request_logs_cache_savings`.execute(db);
  await sql`DROP TABLE analytics_narrow_rollups`.execute(db);
}
