import { sql } from 'kysely';
import { COMBINATION_SEPARATOR } from '../../src/config/rollup-metadata-keys.js';
import type { Db } from '../../src/storage/database.js';
import {
  FULL_ROLLUP_DIMENSIONS as FULL_DIMENSIONS,
  LATENCY_BUCKETS,
  LATENCY_FLOOR_MS,
  LATENCY_GAMMA,
  MEASURES,
  METADATA_ROLLUP_MAX_VALUE,
  NARROW_DIMENSIONS,
  NARROW_ROLLUP_KEY,
} from '../../src/storage/repositories/request-log-rollups.js';

/**
 * The analytics benchmark's rows on PostgreSQL, made by the server: `INSERT … SELECT` over
 * `generate_series` with the distribution of the benchmark's generator (bench-analytics.ts), and
 * the rollups then built from `request_logs` in SQL, as the gateway's writes would have made
 * them (test/integration/analytics-rollups-sql-postgres.test.ts compares the two). Going
 * through the repository costs ~600 µs a row on the development machine: 10 million rows would
 * take a day and a half.
 */

export const BENCH_MODELS = [
  ['openai', 'gpt-4o-mini'],
  ['openai', 'gpt-4o'],
  ['anthropic', 'claude-sonnet-4'],
  ['openai', 'text-embedding-3-small'],
  ['groq', 'llama-3.3-70b'],
  ['anthropic', 'claude-haiku-3.5'],
  ['mistral-ai', 'mistral-large'],
  ['google', 'gemini-2.0-flash'],
] as const;
export const BENCH_SOURCES = ['provider:openai-prod', 'virtual_key:main', 'direct', 'custom_host'];

export interface GeneratedSet {
  organisationId: string;
  workspaces: readonly string[];
  keys: readonly string[];
  configs: readonly string[];
  /** Rows of the whole set: row i is made at `now − span + (i / rows) · span`. */
  rows: number;
  now: number;
  spanMs: number;
}

/** Skewed index into `n` items, as bench-analytics.ts's `skewed`: the first ones far more often. */
const skewed = (n: number, r: string) => sql.raw(`least(${n - 1}, floor(${n} * ${r} * ${r}))::int`);

/**
 * Inserts rows `from` … `to − 1` of the set in one statement (ids are random UUIDs). Every
 * random draw of the TypeScript generator is a `random()` column of the inner select, evaluated
 * once per row (`offset 0` keeps the planner from inlining it).
 */
export async function insertGeneratedRows(db: Db, set: GeneratedSet, from: number, to: number): Promise<void> {
  const providers = BENCH_MODELS.map(([provider]) => provider);
  const models = BENCH_MODELS.map(([, model]) => model);
  await sql`
    insert into request_logs (id, trace_id, request_id, organisation_id, workspace_id, api_key_id, provider,
      credential_source, model, endpoint_type, method, path, status_code, is_success, is_stream, latency_ms,
      prompt_tokens, completion_tokens, cached_tokens, total_tokens, cost, cost_currency, cache_status, metadata,
      created_at, config_id, retry_count)
    select gen_random_uuid()::text, gen_random_uuid()::text, gen_random_uuid()::text, ${set.organisationId},
      (${set.workspaces}::text[])[k % ${set.workspaces.length} + 1], (${set.keys}::text[])[k + 1],
      (${providers}::text[])[m + 1], (${BENCH_SOURCES}::text[])[s + 1], (${models}::text[])[m + 1],
      'chatComplete', 'POST', '/v1/chat/completions', status, (status = 200)::int, 0, exp(4 + r_latency * 3),
      prompt, completion, 0, prompt + completion, (prompt * 0.15 + completion * 0.6) / 1e6, 'USD',
      case when r_cache < 0.08 then 'HIT' when r_cache < 0.1 then 'SEMANTIC_HIT' when r_cache < 0.3 then 'MISS'
        else 'DISABLED' end,
      case when r_metadata < 0.5 then '{"env":"' || case when r_env < 0.7 then 'prod' else 'dev' end
        || '","team":"team-' || floor(r_team * 6)::int || '"}' end,
      to_char((timestamptz 'epoch' + floor(${set.now - set.spanMs}::float8 + i::float8 / ${set.rows} * ${set.spanMs})::bigint
        * interval '1 millisecond') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      case when r_config < 0.3 then (${set.configs}::text[])[c + 1] end, 0
    from (
      select *,
        case when status = 200 then 50 + floor(r_prompt * 2000)::bigint end as prompt,
        case when status = 200 then floor(r_completion * 600)::bigint end as completion
      from (
        select *, ${skewed(BENCH_MODELS.length, 'r_model')} as m, ${skewed(set.keys.length, 'r_key')} as k,
          ${skewed(BENCH_SOURCES.length, 'r_source')} as s, ${skewed(set.configs.length, 'r_config_pick')} as c,
          case when r_status < 0.93 then 200 when r_status < 0.96 then 429 when r_status < 0.985 then 500
            else 400 end as status
        from (
          select i, random() as r_model, random() as r_status, random() as r_prompt, random() as r_completion,
            random() as r_key, random() as r_cache, random() as r_source, random() as r_latency,
            random() as r_metadata, random() as r_env, random() as r_team, random() as r_config,
            random() as r_config_pick
          from generate_series(${from}::int, ${to - 1}::int) as i
          offset 0
        ) draws
        offset 0
      ) picked
    ) rows`.execute(db);
}

/** The first hour of the period holding `hour` (hours since the epoch), as `periodStart` computes it. */
function periodStartSql(period: number): string {
  const day = '(hour / 24)';
  const monday = `(${day} - ((${day} + 3) % 7))`;
  if (period === 1) return 'hour';
  if (period === 24) return `${day} * 24`;
  if (period === 168) return `${monday} * 24`;
  return `(4 + ((${monday} - 4) / 28) * 28) * 24`;
}

/** `latencyBucket` in SQL. */
const BUCKET_SQL = `case when not (latency_ms > ${LATENCY_FLOOR_MS}) then 0 else least(${LATENCY_BUCKETS - 1},
  greatest(1, ceil(ln(latency_ms / ${LATENCY_FLOOR_MS}) / ln(${LATENCY_GAMMA}::float8))::int)) end`;

/**
 * One (uint16 bucket, uint32 count) pair of a stored histogram in hex, little-endian, as
 * `encodeHistogram` writes it: the bytes are swapped arithmetically and printed once each.
 */
const PAIR_HEX_SQL = `lpad(to_hex(((bucket & 255) << 8) | (bucket >> 8)), 4, '0')
  || lpad(to_hex(((n & 255) << 24) | (((n >> 8) & 255) << 16) | (((n >> 16) & 255) << 8) | (n >> 24)), 8, '0')`;

/**
 * Runs `work` with the table's indexes and unique constraints dropped, then makes them again:
 * building an index once over millions of rows is much faster than growing it row by row.
 */
export async function withoutIndexes(db: Db, table: string, work: () => Promise<void>): Promise<void> {
  const { rows: constraints } = await sql<{ name: string; definition: string }>`
    select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint
    where conrelid = ${table}::regclass and contype in ('p', 'u')`.execute(db);
  const { rows: indexes } = await sql<{ name: string; definition: string }>`
    select indexname as name, indexdef as definition from pg_indexes
    where schemaname = current_schema() and tablename = ${table}
      and indexname not in (select conname from pg_constraint where conrelid = ${table}::regclass)`.execute(db);
  for (const c of constraints) await sql.raw(`alter table ${table} drop constraint "${c.name}"`).execute(db);
  for (const i of indexes) await sql.raw(`drop index "${i.name}"`).execute(db);
  await work();
  await db.connection().execute(async (conn) => {
    await sql`set maintenance_work_mem = '512MB'`.execute(conn);
    for (const c of constraints)
      await sql.raw(`alter table ${table} add constraint "${c.name}" ${c.definition}`).execute(conn);
    for (const i of indexes) await sql.raw(i.definition).execute(conn);
    await sql`reset maintenance_work_mem`.execute(conn);
  });
}

/**
 * Builds `analytics_rollups` and `analytics_key_rollups` from every row of `request_logs` (the
 * rollup tables must be empty): the rows are summed per hour, dimensions and latency bucket
 * once, then per period; the histogram of a rollup row is its buckets' counts, encoded in order.
 * Sums of floating-point columns may differ from the gateway's in the last digits (another
 * order of addition). Runs on one connection, with `work_mem` raised for its group-bys.
 */
export async function buildRollupsFromLogs(db: Db): Promise<void> {
  await buildFrom(db, 'request_logs', FULL_DIMENSIONS, [
    ['analytics_rollups', FULL_DIMENSIONS],
    ['analytics_key_rollups', ['workspace_id', 'api_key_id']],
  ]);
}

/**
 * The rows of `request_logs` with a pair of `keys` (metadata keys and combinations `a+b`, by
 * canonical name), once per pair, with its `metadata_key` and `metadata_value`, as the writer sums
 * them: a key's value, or a combination's two values as a compact JSON array (combinationValue;
 * `to_json` escapes as JSON.stringify does for the benchmark's values), of at most
 * METADATA_ROLLUP_MAX_VALUE characters.
 */
function pairRows(keys: readonly string[]): string {
  const list = keys.map((k) => `'${k.replaceAll("'", "''")}'`).join(', ');
  const part = (i: number) => `split_part(k.metadata_key, '${COMBINATION_SEPARATOR}', ${i})`;
  const [first, second] = [part(1), part(2)];
  const isString = (key: string) => `jsonb_typeof(l.metadata::jsonb -> ${key}) = 'string'`;
  return `select * from (select l.*, k.metadata_key,
      case when ${second} = '' then l.metadata::jsonb ->> k.metadata_key
        else '[' || to_json(l.metadata::jsonb ->> ${first})::text || ',' || to_json(l.metadata::jsonb ->> ${second})::text || ']'
      end as metadata_value
    from request_logs l cross join unnest(array[${list}]::text[]) as k(metadata_key)
    where l.metadata is not null and ${isString(first)} and (${second} = '' or ${isString(second)})) p
    where length(metadata_value) <= ${METADATA_ROLLUP_MAX_VALUE}`;
}

/**
 * Builds `analytics_metadata_rollups` for `keys` (as `pairRows` takes them) from every row of
 * `request_logs` (that table must hold none of their rows), as the writer sums them. Then marks
 * the keys whole from the first hour.
 */
export async function buildMetadataRollupsFromLogs(db: Db, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  const source = `(${pairRows(keys)}) with_pairs`;
  const dims = ['metadata_key', 'metadata_value', ...FULL_DIMENSIONS];
  await buildFrom(db, source, dims, [['analytics_metadata_rollups', dims]]);
  for (const key of keys) {
    await sql`insert into analytics_metadata_keys (metadata_key, since_hour) values (${key}, 0)
      on conflict (metadata_key) do update set since_hour = 0`.execute(db);
  }
}

/**
 * Builds `analytics_narrow_rollups` from every row of `request_logs` (that table must be empty),
 * as the writer sums them: per workspace and each dimension's value, and per pair of `keys` (as
 * `buildMetadataRollupsFromLogs` takes them) also per workspace alone; then marks them whole
 * from the first hour (`analytics_narrow_since`), as the backfill job does when it is done.
 */
export async function buildNarrowRollupsFromLogs(db: Db, keys: readonly string[]): Promise<void> {
  const pairs = keys.length === 0 ? '' : `union all ${pairRows(keys)}`;
  const value = `case d.dimension when '' then ''
    ${NARROW_DIMENSIONS.map((n) => `when '${n}' then coalesce(p.${n}::text, '')`).join(' ')} end`;
  const source = `(select p.*, d.dimension, ${value} as value
    from (select l.*, ''::text as metadata_key, ''::text as metadata_value from request_logs l ${pairs}) p
    cross join unnest(array['', ${NARROW_DIMENSIONS.map((n) => `'${n}'`).join(', ')}]::text[]) as d(dimension)
    where d.dimension <> '' or p.metadata_key <> '') narrow`;
  await buildFrom(db, source, NARROW_ROLLUP_KEY, [['analytics_narrow_rollups', NARROW_ROLLUP_KEY]]);
  // Whole from the first request: the reader may take every period from them.
  await sql`insert into analytics_narrow_since (id, since_hour) values (1, 0) on conflict (id) do update set since_hour = 0`.execute(
    db,
  );
}

/** `buildNarrowRollupsFromLogs` with the table's indexes dropped meanwhile (then made again). */
export async function buildNarrowRollupsFromLogsFast(db: Db, keys: readonly string[]): Promise<void> {
  await withoutIndexes(db, 'analytics_narrow_rollups', () => buildNarrowRollupsFromLogs(db, keys));
}

/** The rollup rows of `tables` (each with its dimensions, a subset of `dims`), summed from the rows of `source`. */
async function buildFrom(
  db: Db,
  source: string,
  dims: readonly string[],
  tables: ReadonlyArray<readonly [string, readonly string[]]>,
): Promise<void> {
  // Collation "C" (byte order) for the group-bys: the same groups, without a locale's slow comparisons.
  const coalesced = dims.map((d) => (d === 'status_code' ? d : `coalesce(${d}, '') collate "C" as ${d}`));
  // Sums in float8 (exact for integers below 2^53): summing numeric, what sum(bigint) gives, is far slower.
  const sums = `count(*)::float8 as requests, count(*) filter (where is_success <> 0)::float8 as successes,
    count(*) filter (where cache_status in ('HIT', 'SEMANTIC_HIT'))::float8 as cache_hits,
    count(*) filter (where cache_status = 'SEMANTIC_HIT')::float8 as semantic_hits, coalesce(sum(cost), 0) as cost,
    coalesce(sum(total_tokens::float8), 0) as total_tokens, count(total_tokens)::float8 as token_rows,
    coalesce(sum(prompt_tokens::float8), 0) as prompt_tokens, count(prompt_tokens)::float8 as prompt_rows,
    coalesce(sum(completion_tokens::float8), 0) as completion_tokens,
    count(completion_tokens)::float8 as completion_rows,
    sum(latency_ms) as latency_sum, min(latency_ms) as latency_min, max(latency_ms) as latency_max,
    min(created_at) as first_seen, max(created_at) as last_seen`;
  const resum = `${MEASURES.map((m) => `sum(${m}) as ${m}`).join(', ')}, min(latency_min) as latency_min,
    max(latency_max) as latency_max, min(first_seen) as first_seen, max(last_seen) as last_seen`;
  await db.connection().execute(async (conn) => {
    await sql`set work_mem = '256MB'`.execute(conn);
    await sql
      .raw(
        `create temporary table rollup_base as
         select organisation_id, floor(extract(epoch from created_at::timestamptz) / 3600)::bigint as hour,
           ${coalesced.join(', ')}, ${BUCKET_SQL} as bucket, ${sums}
         from ${source} group by 1, 2, ${dims.map((_, i) => i + 3).join(', ')}, ${dims.length + 3}`,
      )
      .execute(conn);
    for (const [table, tableDims] of tables) {
      for (const period of [1, 24, 168, 672]) {
        const keys = ['organisation_id', 'period_start', ...tableDims].join(', ');
        await sql
          .raw(
            `insert into ${table} (organisation_id, period, period_start, ${tableDims.join(', ')}, ${MEASURES.join(', ')},
               latency_min, latency_max, latency_hist, first_seen, last_seen)
             select organisation_id, ${period}, period_start, ${tableDims.join(', ')}, ${MEASURES.map((m) => `sum(${m})`).join(', ')},
               min(latency_min), max(latency_max), decode(string_agg(${PAIR_HEX_SQL}, '' order by bucket), 'hex'),
               min(first_seen), max(last_seen)
             from (
               select ${keys}, bucket, sum(requests)::bigint as n, ${resum}
               from (select *, ${periodStartSql(period)} as period_start from rollup_base) base
               group by ${keys}, bucket
             ) buckets
             group by ${keys}`,
          )
          .execute(conn);
      }
    }
    await sql`drop table rollup_base`.execute(conn);
    await sql`reset work_mem`.execute(conn);
  });
}

/** `buildRollupsFromLogs` into the rollup tables with their keys dropped meanwhile (then made again). */
export async function buildRollupsFromLogsFast(db: Db): Promise<void> {
  await withoutIndexes(db, 'analytics_rollups', () =>
    withoutIndexes(db, 'analytics_key_rollups', () => buildRollupsFromLogs(db)),
  );
}

/** `buildMetadataRollupsFromLogs` with the table's key dropped meanwhile (then made again). */
export async function buildMetadataRollupsFromLogsFast(db: Db, keys: readonly string[]): Promise<void> {
  await withoutIndexes(db, 'analytics_metadata_rollups', () => buildMetadataRollupsFromLogs(db, keys));
}
