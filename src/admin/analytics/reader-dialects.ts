import { CompiledQuery } from 'kysely';
import type { Db } from '../../storage/database.js';
import {
  addHistogram,
  encodeHistogram,
  LATENCY_BUCKETS,
  LATENCY_FLOOR_MS,
  LATENCY_GAMMA,
  latencyBucket,
} from '../../storage/repositories/request-logs.js';

/**
 * What the analytics statements say differently on each engine. Both return one row per group:
 * the group, the sixteen measures of totals.ts's addRow, and the stored latency histogram.
 */
export interface AnalyticsDialect {
  rollupMeasures: string;
  rawMeasures: string;
  /** The merged histogram of rollup rows (SQLite: an aggregate function; PostgreSQL: every row's pairs in one value, merged after). */
  rollupHistogram: string;
  /** The histogram of raw latencies (SQLite: an aggregate function; PostgreSQL: one (bucket, 1) pair per row, merged after). */
  rawHistogram: string;
  /** Seconds since the epoch of an ISO text column, divided into buckets of `seconds`. */
  epochBucket: (column: string, seconds: number) => string;
  /** `column` among the values of one parameter (`list` makes it). */
  inList: (column: string) => string;
  list: (values: readonly (string | number)[]) => unknown;
  /** Whether a text column holds one parameter. */
  contains: (column: string) => string;
  metadataIndex: string;
  /** The value of one metadata key (the parameter) of a row, as text; NULL when it has none. */
  metadataValue: string;
}

export const SQLITE: AnalyticsDialect = {
  rollupMeasures: `sum(requests), sum(successes), sum(cache_hits), sum(semantic_hits), total(cost), sum(total_tokens), sum(token_rows),
  sum(prompt_tokens), sum(prompt_rows), sum(completion_tokens), sum(completion_rows), total(latency_sum), min(latency_min), max(latency_max),
  min(first_seen), max(last_seen)`,
  rawMeasures: `count(*), sum(is_success != 0), sum(cache_status IN ('HIT', 'SEMANTIC_HIT')), sum(cache_status = 'SEMANTIC_HIT'), total(cost),
  total(total_tokens), count(total_tokens), total(prompt_tokens), count(prompt_tokens), total(completion_tokens), count(completion_tokens),
  total(latency_ms), min(latency_ms), max(latency_ms), min(created_at), max(created_at)`,
  rollupHistogram: 'svcgw_hist_sum(latency_hist)',
  rawHistogram: 'svcgw_latency_hist(latency_ms)',
  epochBucket: (column, seconds) => `CAST(unixepoch(${column}) / ${seconds} AS INTEGER)`,
  inList: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  list: (values) => JSON.stringify(values),
  contains: (column) => `instr(${column}, ?) > 0`,
  metadataIndex: ' INDEXED BY request_logs_metadata_analytics',
  metadataValue: `(SELECT CAST(value AS TEXT) FROM json_each(metadata) WHERE key = ?)`,
};

/** `latencyBucket(latency_ms)` in SQL. */
const BUCKET_POSTGRES = `(CASE WHEN NOT (latency_ms > ${LATENCY_FLOOR_MS}) THEN 0 ELSE least(${LATENCY_BUCKETS - 1},
  greatest(1, ceil(ln(latency_ms / ${LATENCY_FLOOR_MS}) / ln(${LATENCY_GAMMA}::float8))::int)) END)`;

/**
 * The raw rows' latencies as one stored histogram with a (bucket, 1) pair per row, end to end in
 * one bytea: an array of hundreds of thousands of floats (a metadata filter over 90 days) took
 * longer to read back than the query took to run.
 */
const RAW_HISTOGRAM_POSTGRES = `string_agg(set_byte(set_byte('\\x000001000000'::bytea, 0, ${BUCKET_POSTGRES} % 256), 1,
  ${BUCKET_POSTGRES} / 256), ''::bytea)`;

/** Every column named, so that rows read as objects keep them all, in order. */
const named = (columns: string[]) => columns.map((c, i) => `${c} AS m${i}`).join(', ');

export const POSTGRES: AnalyticsDialect = {
  rollupMeasures: named([
    'sum(requests)',
    'sum(successes)',
    'sum(cache_hits)',
    'sum(semantic_hits)',
    'coalesce(sum(cost), 0)',
    'sum(total_tokens)',
    'sum(token_rows)',
    'sum(prompt_tokens)',
    'sum(prompt_rows)',
    'sum(completion_tokens)',
    'sum(completion_rows)',
    'coalesce(sum(latency_sum), 0)',
    'min(latency_min)',
    'max(latency_max)',
    'min(first_seen)',
    'max(last_seen)',
  ]),
  rawMeasures: named([
    'count(*)',
    'count(*) FILTER (WHERE is_success <> 0)',
    `count(*) FILTER (WHERE cache_status IN ('HIT', 'SEMANTIC_HIT'))`,
    `count(*) FILTER (WHERE cache_status = 'SEMANTIC_HIT')`,
    'coalesce(sum(cost), 0)',
    'coalesce(sum(total_tokens), 0)',
    'count(total_tokens)',
    'coalesce(sum(prompt_tokens), 0)',
    'count(prompt_tokens)',
    'coalesce(sum(completion_tokens), 0)',
    'count(completion_tokens)',
    'coalesce(sum(latency_ms), 0)',
    'min(latency_ms)',
    'max(latency_ms)',
    'min(created_at)',
    'max(created_at)',
  ]),
  // The rows' histograms end to end in one bytea (pairs of bucket and count, which add up in any
  // order): reading back an array of many small byteas cost more than the query itself.
  rollupHistogram: "string_agg(latency_hist, ''::bytea)",
  rawHistogram: RAW_HISTOGRAM_POSTGRES,
  epochBucket: (column, seconds) => `floor(extract(epoch FROM ${column}::timestamptz) / ${seconds})::bigint`,
  inList: (column) => `${column} = ANY(?)`,
  list: (values) => [...values],
  contains: (column) => `strpos(${column}, ?) > 0`,
  metadataIndex: '',
  metadataValue: '(metadata::jsonb ->> CAST(? AS text))',
};

/**
 * Runs a statement written with `?` placeholders on PostgreSQL; the histogram column (an array of
 * stored histograms or of latencies) becomes one stored histogram, as SQLite's aggregates give it.
 */
export function postgresRunner(db: Db): (text: string, params: unknown[]) => Promise<unknown[][]> {
  return async (text, params) => {
    let n = 0;
    const query = CompiledQuery.raw(
      text.replace(/\?/g, () => `$${++n}`),
      params,
    );
    const { rows } = await db.executeQuery<Record<string, unknown>>(query);
    return rows.map((row) => {
      const values = Object.values(row);
      const last = values.length - 1;
      const parts = values[last];
      if (parts instanceof Uint8Array) {
        const dense = new Float64Array(LATENCY_BUCKETS);
        addHistogram(dense, parts);
        values[last] = encodeHistogram(dense);
      } else if (Array.isArray(parts)) {
        const dense = new Float64Array(LATENCY_BUCKETS);
        for (const part of parts as unknown[]) {
          if (typeof part === 'number') dense[latencyBucket(part)]!++;
          else addHistogram(dense, part as Uint8Array | null);
        }
        values[last] = encodeHistogram(dense);
      }
      return values;
    });
  };
}
