import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../postgres/open-postgres.js';
import { postgresDdl } from '../postgres/column-types.js';

export const MEASURES = `
  requests INTEGER NOT NULL,
  successes INTEGER NOT NULL,
  cache_hits INTEGER NOT NULL,
  semantic_hits INTEGER NOT NULL,
  cost REAL NOT NULL,
  total_tokens INTEGER NOT NULL,
  token_rows INTEGER NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  prompt_rows INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  completion_rows INTEGER NOT NULL,
  latency_sum REAL NOT NULL,
  latency_min REAL NOT NULL,
  latency_max REAL NOT NULL,
  latency_hist BLOB NOT NULL,
  first_seen TEXT NOT NULL,
  last_seen TEXT NOT NULL`;

/**
 * Analytics rollups (docs/analytics.md): request logs summed per hour, day, week and four weeks, per every
 * dimension analytics group or filter by (`analytics_rollups`) and per workspace and key only
 * (`analytics_key_rollups`), written with the logs by the request-log repository. Existing logs
 * are summed in here once. Plus the partial index that metadata-filtered analytics read.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Tables of an unreleased 0012 that development databases may still hold.
  await sql`DROP TABLE IF EXISTS request_log_daily`.execute(db);
  await sql`DROP TABLE IF EXISTS observability_state`.execute(db);
  const postgres = isPostgres(db);
  for (const ddl of [ROLLUPS_TABLE, KEY_ROLLUPS_TABLE]) await sql.raw(postgres ? postgresDdl(ddl) : ddl).execute(db);
  if (postgres) {
    // A B-tree entry of PostgreSQL holds at most a third of a page: the metadata text cannot be
    // in the key. Metadata-filtered analytics read the rows of the window through this index.
    await sql`CREATE INDEX request_logs_metadata_analytics ON request_logs (organisation_id, created_at) WHERE metadata IS NOT NULL`.execute(
      db,
    );
    // No backfill: a PostgreSQL database is created by this release or a later one, in one run
    // of every migration, so it holds no request logs yet.
    return;
  }
  // Only rows with metadata, with every column analytics read: a metadata filter scans this
  // index over the window instead of the table.
  await sql`CREATE INDEX request_logs_metadata_analytics ON request_logs (
    organisation_id, created_at, metadata, status_code, is_success, latency_ms, cost, total_tokens, prompt_tokens, completion_tokens,
    cache_status, workspace_id, api_key_id, provider, credential_source, model, config_id, prompt_id
  ) WHERE metadata IS NOT NULL`.execute(db);
  await backfill(db);
}

const ROLLUPS_TABLE = `CREATE TABLE analytics_rollups (
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
    ${MEASURES},
    PRIMARY KEY (organisation_id, period, period_start, workspace_id, api_key_id, provider, credential_source, model, config_id, prompt_id, status_code)
  ) WITHOUT ROWID`;
const KEY_ROLLUPS_TABLE = `CREATE TABLE analytics_key_rollups (
    organisation_id TEXT NOT NULL,
    period INTEGER NOT NULL,
    period_start INTEGER NOT NULL,
    workspace_id TEXT NOT NULL,
    api_key_id TEXT NOT NULL,
    ${MEASURES},
    PRIMARY KEY (organisation_id, period, period_start, workspace_id, api_key_id)
  ) WITHOUT ROWID`;

/** Latency bucket and the Monday of the week, as the repository computes them (request-logs.ts). */
const BUCKET = `CASE WHEN latency_ms > 0.01 THEN min(511, max(1, CAST(ceil(ln(latency_ms / 0.01) / ln(1.05)) AS INTEGER))) ELSE 0 END`;
const DAY = `CAST(unixepoch(created_at) / 86400 AS INTEGER)`;
// Epoch day 4 (1970-01-05) was a Monday; four-week periods are counted from it.
const MONDAY = `(${DAY} - ((${DAY} + 3) % 7))`;
const PERIODS: Array<[number, string]> = [
  [1, `CAST(unixepoch(created_at) / 3600 AS INTEGER)`],
  [24, `${DAY} * 24`],
  [168, `${MONDAY} * 24`],
  [672, `(4 + ((${MONDAY} - 4) / 28) * 28) * 24`],
];
/** One (uint16 bucket, uint32 count) pair, little-endian, in hex; `unhex(group_concat(…))` is the stored histogram. */
const PAIR = `printf('%02X%02X%02X%02X%02X%02X', bucket % 256, bucket / 256, n % 256, (n / 256) % 256, (n / 65536) % 256, (n / 16777216) % 256)`;

/**
 * Rollups of the logs already written when this migration runs, in SQL: per key, period and
 * latency bucket first, then per key and period with the histogram assembled from those.
 */
async function backfill(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM request_logs`.execute(db);
  if (Number(rows[0]?.n ?? 0) === 0) return;
  const full = [
    'workspace_id',
    'api_key_id',
    `coalesce(provider, '')`,
    `coalesce(credential_source, '')`,
    `coalesce(model, '')`,
    `coalesce(config_id, '')`,
    `coalesce(prompt_id, '')`,
    'status_code',
  ];
  for (const [table, dims] of [
    ['analytics_rollups', full],
    ['analytics_key_rollups', ['workspace_id', 'api_key_id']],
  ] as const) {
    const named = dims.map((d, i) => `${d} AS d${i}`).join(', ');
    const keys = dims.map((_, i) => `d${i}`).join(', ');
    for (const [period, start] of PERIODS) {
      await sql
        .raw(
          `INSERT INTO ${table}
        SELECT organisation_id, ${period}, s, ${keys}, sum(n), sum(ok), sum(hits), sum(semantic), sum(cost), sum(tt), sum(ttn), sum(pt), sum(ptn), sum(ct), sum(ctn),
          sum(lat), min(lmin), max(lmax), unhex(group_concat(${PAIR}, '' ORDER BY bucket)), min(fs), max(ls)
        FROM (SELECT organisation_id, ${start} AS s, ${named}, ${BUCKET} AS bucket, count(*) AS n, sum(is_success != 0) AS ok,
            sum(cache_status IN ('HIT', 'SEMANTIC_HIT')) AS hits, sum(cache_status = 'SEMANTIC_HIT') AS semantic, coalesce(sum(cost), 0) AS cost,
            coalesce(sum(total_tokens), 0) AS tt, count(total_tokens) AS ttn, coalesce(sum(prompt_tokens), 0) AS pt, count(prompt_tokens) AS ptn,
            coalesce(sum(completion_tokens), 0) AS ct, count(completion_tokens) AS ctn, sum(latency_ms) AS lat, min(latency_ms) AS lmin, max(latency_ms) AS lmax,
            min(created_at) AS fs, max(created_at) AS ls
          FROM request_logs GROUP BY organisation_id, s, ${keys}, bucket)
        GROUP BY organisation_id, s, ${keys}`,
        )
        .execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX request_logs_metadata_analytics`.execute(db);
  await sql`DROP TABLE analytics_key_rollups`.execute(db);
  await sql`DROP TABLE analytics_rollups`.execute(db);
}
