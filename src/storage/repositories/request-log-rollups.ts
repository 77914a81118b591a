import { combinationValue, entryKeys } from '../../config/rollup-metadata-keys.js';
import type { RequestLogInsert } from './request-log-columns.js';
import { addHistogram, encodeCounts, LATENCY_BUCKETS, latencyBucket } from './latency-histogram.js';

export * from './latency-histogram.js';
export * from './request-log-columns.js';

// ---------------------------------------------------------------------------------------------
// Rollups: every batch is summed per key in memory, then added to `analytics_rollups` (every
// dimension), `analytics_key_rollups` (workspace and key only) and `analytics_narrow_rollups`
// (workspace and one dimension), each for the UTC hour, day, week and four weeks of the
// request, in the transaction that inserts the rows.
// ---------------------------------------------------------------------------------------------

const HOUR_MS = 3_600_000;
/** Rollup periods, in hours: hour, UTC day, week (from Monday), four weeks (from a Monday, counted from 1970-01-05). */
export const ROLLUP_PERIODS = [1, 24, 168, 672] as const;
export type RollupPeriod = (typeof ROLLUP_PERIODS)[number];

/** The first hour (hours since the epoch) of the period of `period` hours holding `hour`; weeks start on Monday. */
export function periodStart(hour: number, period: RollupPeriod): number {
  if (period === 1) return hour;
  const day = Math.floor(hour / 24);
  if (period === 24) return day * 24;
  const monday = day - ((((day + 3) % 7) + 7) % 7);
  if (period === 168) return monday * 24;
  // Epoch day 4 (1970-01-05) was a Monday: four-week periods are counted from it.
  return (4 + Math.floor((monday - 4) / 28) * 28) * 24;
}

/** Text dimensions of `analytics_rollups`, in key order after organisation, period and start; NULL is stored as ''. */
export const ROLLUP_TEXT_DIMENSIONS = [
  'workspace_id',
  'api_key_id',
  'provider',
  'credential_source',
  'model',
  'config_id',
  'prompt_id',
] as const;

/** Every dimension of `analytics_rollups`, in key order after organisation, period and start. */
export const FULL_ROLLUP_DIMENSIONS = [...ROLLUP_TEXT_DIMENSIONS, 'status_code', 'guardrail_verdict'] as const;
/** The dimensions of `analytics_metadata_rollups`, in the order `sumMetadataBatch` gives them. */
export const METADATA_ROLLUP_DIMENSIONS = ['metadata_key', 'metadata_value', ...FULL_ROLLUP_DIMENSIONS] as const;

/** The key columns of `analytics_narrow_rollups` after organisation, period and start, in the order `sumNarrow` gives them. */
export const NARROW_ROLLUP_KEY = ['metadata_key', 'metadata_value', 'dimension', 'value', 'workspace_id'] as const;

/**
 * The dimensions summed one at a time in `analytics_narrow_rollups` (`dimension`, with the value
 * as text): those analytics group or filter by, but for workspace and key (analytics_key_rollups).
 */
export const NARROW_DIMENSIONS = [
  'provider',
  'credential_source',
  'model',
  'config_id',
  'prompt_id',
  'status_code',
  'guardrail_verdict',
] as const;
export type NarrowDimension = (typeof NARROW_DIMENSIONS)[number];
/** Where each narrow dimension sits in `fullDimensions` (after workspace and key). */
const NARROW_AT = NARROW_DIMENSIONS.map((d) => (FULL_ROLLUP_DIMENSIONS as readonly string[]).indexOf(d));

/** The additive measures of a rollup row (and of the analytics totals built from them). */
export interface RollupMeasures {
  requests: number;
  successes: number;
  /** HIT and SEMANTIC_HIT. */
  cacheHits: number;
  semanticHits: number;
  cost: number;
  totalTokens: number;
  /** Requests that reported tokens: token averages count only these. */
  tokenRows: number;
  promptTokens: number;
  promptRows: number;
  completionTokens: number;
  completionRows: number;
  latencySum: number;
  latencyMin: number;
  latencyMax: number;
}

export interface RollupSums extends RollupMeasures {
  /** The key columns: organisation, period, period start, then the table's dimensions. */
  dims: (string | number)[];
  firstSeen: string;
  lastSeen: string;
  histogram: Map<number, number>;
}

export const MEASURES = [
  'requests',
  'successes',
  'cache_hits',
  'semantic_hits',
  'cost',
  'total_tokens',
  'token_rows',
  'prompt_tokens',
  'prompt_rows',
  'completion_tokens',
  'completion_rows',
  'latency_sum',
] as const;

/** Every column of a rollup row, in the order `rollupValues` gives the values. */
export const rollupColumns = (dims: readonly string[]): string[] => [
  'organisation_id',
  'period',
  'period_start',
  ...dims,
  ...MEASURES,
  'latency_min',
  'latency_max',
  'latency_hist',
  'first_seen',
  'last_seen',
];

const emptySums = (dims: (string | number)[], seen: string): RollupSums => ({
  dims,
  requests: 0,
  successes: 0,
  cacheHits: 0,
  semanticHits: 0,
  cost: 0,
  totalTokens: 0,
  tokenRows: 0,
  promptTokens: 0,
  promptRows: 0,
  completionTokens: 0,
  completionRows: 0,
  latencySum: 0,
  latencyMin: Infinity,
  latencyMax: -Infinity,
  firstSeen: seen,
  lastSeen: seen,
  histogram: new Map(),
});

/** An hour's sums, with what its longer periods need: the key after the period, and the dimensions. */
interface HourSums {
  hour: number;
  /** The rollup key without period and start. */
  group: string;
  organisationId: string;
  dimensions: (string | number)[];
  sums: RollupSums;
}

/**
 * Sums a batch per rollup key: [all dimensions, workspace and key only], each per period. Rows
 * are summed per hour first (a batch usually falls in one or two hours, so a row costs two map
 * lookups), and the hour sums then fan out to the day, week and four-week periods.
 */
export function sumBatch(
  rows: readonly RequestLogInsert[],
): [Map<string, RollupSums>, Map<string, RollupSums>, Map<string, RollupSums>] {
  const fullHours = new Map<string, HourSums>();
  const keyHours = new Map<string, HourSums>();
  // The sums of the row before: rows of a batch mostly share their keys (one application's
  // requests), and those rows are added without making and looking up their keys again.
  let last: { row: RequestLogInsert; hour: number; full: HourSums; byKey: HourSums } | null = null;
  for (const row of rows) {
    const hour = Math.floor(Date.parse(row.created_at) / HOUR_MS);
    const bucket = latencyBucket(row.latency_ms);
    if (last !== null && last.hour === hour && sameRollupKeys(last.row, row)) {
      add(last.full.sums, row, bucket);
      add(last.byKey.sums, row, bucket);
      continue;
    }
    const keyPart = `${row.organisation_id}\u0000${row.workspace_id}\u0000${row.api_key_id}`;
    const fullPart = `${keyPart}\u0000${fullGroup(row)}`;
    const full = addToHour(fullHours, hour, fullPart, row, bucket, () => fullDimensions(row));
    const byKey = addToHour(keyHours, hour, keyPart, row, bucket, () => [row.workspace_id, row.api_key_id]);
    last = { row, hour, full, byKey };
  }
  return [fanOut(fullHours), fanOut(keyHours), fanOut(sumNarrow(fullHours.values(), false))];
}

/** Whether two rows of one hour fall in the same rollup rows: the same organisation and every dimension alike. */
function sameRollupKeys(a: RequestLogInsert, b: RequestLogInsert): boolean {
  if (a.organisation_id !== b.organisation_id) return false;
  for (const dimension of FULL_ROLLUP_DIMENSIONS) if (a[dimension] !== b[dimension]) return false;
  return true;
}

/**
 * The narrow rows of hour sums of every dimension (`withPair`: of a metadata pair and every
 * dimension): per workspace and one dimension's value, and with a pair also per workspace alone
 * (dimension ''). Summed from the hour sums, not the rows: a batch has fewer of them.
 */
function sumNarrow(hours: Iterable<HourSums>, withPair: boolean, period: RollupPeriod = 1): Map<string, HourSums> {
  const out = new Map<string, HourSums>();
  const into = (entry: HourSums, dims: (string | number)[]) => {
    const group = `${entry.organisationId}\u0000${dims.join('\u0000')}`;
    const key = `${entry.hour}\u0000${group}`;
    let narrow = out.get(key);
    if (narrow === undefined) {
      narrow = {
        hour: entry.hour,
        group,
        organisationId: entry.organisationId,
        dimensions: dims,
        sums: emptySums([entry.organisationId, period, entry.hour, ...dims], entry.sums.firstSeen),
      };
      out.set(key, narrow);
    }
    merge(narrow.sums, entry.sums);
  };
  for (const entry of hours) {
    const at = withPair ? 2 : 0;
    const pairKey = withPair ? (entry.dimensions[0] as string) : '';
    const pairValue = withPair ? (entry.dimensions[1] as string) : '';
    const workspace = entry.dimensions[at] as string;
    if (withPair) into(entry, [pairKey, pairValue, '', '', workspace]);
    for (let i = 0; i < NARROW_DIMENSIONS.length; i++)
      into(entry, [pairKey, pairValue, NARROW_DIMENSIONS[i]!, String(entry.dimensions[at + NARROW_AT[i]!]), workspace]);
  }
  return out;
}

/**
 * Metadata values (a combination's: both values encoded as one) longer than this are not summed
 * in `analytics_metadata_rollups` (a PostgreSQL B-tree entry holds at most ~2,700 bytes): a
 * filter on such a value reads request_logs.
 */
export const METADATA_ROLLUP_MAX_VALUE = 200;

/**
 * Sums a batch for `analytics_metadata_rollups` (per metadata key or combination of two keys of
 * `keys` that a row holds, with a value of at most METADATA_ROLLUP_MAX_VALUE characters: its value and every dimension) and
 * for the pairs' rows of `analytics_narrow_rollups`.
 */
export function sumMetadataBatch(
  rows: readonly RequestLogInsert[],
  keys: readonly string[],
): [Map<string, RollupSums>, Map<string, RollupSums>] {
  const hours = new Map<string, HourSums>();
  if (keys.length === 0) return [new Map<string, RollupSums>(), new Map<string, RollupSums>()];
  for (const row of rows) {
    const pairs = rollupPairs(row.metadata, keys);
    if (pairs.length === 0) continue;
    const hour = Math.floor(Date.parse(row.created_at) / HOUR_MS);
    const bucket = latencyBucket(row.latency_ms);
    const group = `${row.organisation_id}\u0000${row.workspace_id}\u0000${row.api_key_id}\u0000${fullGroup(row)}`;
    for (const [key, value] of pairs) {
      addToHour(hours, hour, `${key}\u0000${value}\u0000${group}`, row, bucket, () => [
        key,
        value,
        ...fullDimensions(row),
      ]);
    }
  }
  return [fanOut(hours), fanOut(sumNarrow(hours.values(), true))];
}

/**
 * The pairs of `keys` a row's metadata (compact JSON of strings) holds: for a key its value, for
 * a combination of two keys (`env+team`) both values as one (combinationValue), if the row holds
 * both; values longer than METADATA_ROLLUP_MAX_VALUE are not summed.
 */
function rollupPairs(metadata: string | null | undefined, keys: readonly string[]): Array<[string, string]> {
  if (!metadata) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(metadata);
  } catch {
    return [];
  }
  if (parsed === null || typeof parsed !== 'object') return [];
  const valueOf = (key: string): string | undefined => {
    const value = (parsed as Record<string, unknown>)[key];
    return typeof value === 'string' && Object.hasOwn(parsed, key) ? value : undefined;
  };
  const pairs: Array<[string, string]> = [];
  for (const key of keys) {
    const parts = entryKeys(key);
    const values = parts.map(valueOf);
    if (values.some((value) => value === undefined)) continue;
    const value = parts.length === 1 ? values[0]! : combinationValue(values as string[]);
    if (value.length <= METADATA_ROLLUP_MAX_VALUE) pairs.push([key, value]);
  }
  return pairs;
}

/** The dimensions after workspace and key, as a map key. */
const fullGroup = (row: RequestLogInsert): string =>
  `${row.provider ?? ''}\u0000${row.credential_source ?? ''}\u0000${row.model ?? ''}\u0000${row.config_id ?? ''}\u0000${row.prompt_id ?? ''}\u0000${row.status_code}\u0000${row.guardrail_verdict ?? ''}`;

const fullDimensions = (row: RequestLogInsert): (string | number)[] => [
  ...ROLLUP_TEXT_DIMENSIONS.map((d) => row[d] ?? ''),
  row.status_code,
  row.guardrail_verdict ?? '',
];

function addToHour(
  hours: Map<string, HourSums>,
  hour: number,
  group: string,
  row: RequestLogInsert,
  bucket: number,
  dimensionsOf: () => (string | number)[],
): HourSums {
  const key = `${hour}\u0000${group}`;
  let entry = hours.get(key);
  if (entry === undefined) {
    const dimensions = dimensionsOf();
    entry = {
      hour,
      group,
      organisationId: row.organisation_id,
      dimensions,
      sums: emptySums([row.organisation_id, 1, hour, ...dimensions], row.created_at),
    };
    hours.set(key, entry);
  }
  add(entry.sums, row, bucket);
  return entry;
}

/** The hour sums, plus their sums per day, week and four weeks. */
function fanOut(hours: Map<string, HourSums>): Map<string, RollupSums> {
  const out = new Map<string, RollupSums>();
  for (const entry of hours.values()) {
    out.set(`1\u0000${entry.hour}\u0000${entry.group}`, entry.sums);
    for (const period of ROLLUP_PERIODS) {
      if (period === 1) continue;
      const start = periodStart(entry.hour, period);
      const key = `${period}\u0000${start}\u0000${entry.group}`;
      let sums = out.get(key);
      if (sums === undefined) {
        sums = emptySums([entry.organisationId, period, start, ...entry.dimensions], entry.sums.firstSeen);
        out.set(key, sums);
      }
      merge(sums, entry.sums);
    }
  }
  return out;
}

function add(s: RollupSums, row: RequestLogInsert, bucket: number): void {
  s.requests++;
  if (row.is_success) s.successes++;
  if (row.cache_status === 'HIT' || row.cache_status === 'SEMANTIC_HIT') s.cacheHits++;
  if (row.cache_status === 'SEMANTIC_HIT') s.semanticHits++;
  if (typeof row.cost === 'number') s.cost += row.cost;
  if (typeof row.total_tokens === 'number') {
    s.totalTokens += row.total_tokens;
    s.tokenRows++;
  }
  if (typeof row.prompt_tokens === 'number') {
    s.promptTokens += row.prompt_tokens;
    s.promptRows++;
  }
  if (typeof row.completion_tokens === 'number') {
    s.completionTokens += row.completion_tokens;
    s.completionRows++;
  }
  const latency = row.latency_ms;
  s.latencySum += latency;
  if (latency < s.latencyMin) s.latencyMin = latency;
  if (latency > s.latencyMax) s.latencyMax = latency;
  s.histogram.set(bucket, (s.histogram.get(bucket) ?? 0) + 1);
  if (row.created_at < s.firstSeen) s.firstSeen = row.created_at;
  if (row.created_at > s.lastSeen) s.lastSeen = row.created_at;
}

function merge(into: RollupSums, from: RollupSums): void {
  into.requests += from.requests;
  into.successes += from.successes;
  into.cacheHits += from.cacheHits;
  into.semanticHits += from.semanticHits;
  into.cost += from.cost;
  into.totalTokens += from.totalTokens;
  into.tokenRows += from.tokenRows;
  into.promptTokens += from.promptTokens;
  into.promptRows += from.promptRows;
  into.completionTokens += from.completionTokens;
  into.completionRows += from.completionRows;
  into.latencySum += from.latencySum;
  if (from.latencyMin < into.latencyMin) into.latencyMin = from.latencyMin;
  if (from.latencyMax > into.latencyMax) into.latencyMax = from.latencyMax;
  for (const [bucket, count] of from.histogram) into.histogram.set(bucket, (into.histogram.get(bucket) ?? 0) + count);
  if (from.firstSeen < into.firstSeen) into.firstSeen = from.firstSeen;
  if (from.lastSeen > into.lastSeen) into.lastSeen = from.lastSeen;
}

export function rollupValues(s: RollupSums): unknown[] {
  return [
    ...s.dims,
    s.requests,
    s.successes,
    s.cacheHits,
    s.semanticHits,
    s.cost,
    s.totalTokens,
    s.tokenRows,
    s.promptTokens,
    s.promptRows,
    s.completionTokens,
    s.completionRows,
    s.latencySum,
    s.latencyMin,
    s.latencyMax,
    encodeCounts(s.histogram),
    s.firstSeen,
    s.lastSeen,
  ];
}

/**
 * The narrow rows of stored rollup rows of one period (of `analytics_rollups`, or with
 * `withPair` of `analytics_metadata_rollups`), as objects of their columns: what migration 0035
 * sums the rollups written before it into.
 */
export function narrowFromRollups(
  stored: ReadonlyArray<Record<string, unknown>>,
  withPair: boolean,
  period: RollupPeriod,
): RollupSums[] {
  const dims: readonly string[] = withPair ? METADATA_ROLLUP_DIMENSIONS : FULL_ROLLUP_DIMENSIONS;
  const entries = stored.map((row): HourSums => {
    const dense = new Float64Array(LATENCY_BUCKETS);
    addHistogram(dense, row.latency_hist as Uint8Array);
    const histogram = new Map<number, number>();
    dense.forEach((count, bucket) => count > 0 && histogram.set(bucket, count));
    const n = (column: string) => Number(row[column]);
    return {
      hour: n('period_start'),
      group: '',
      organisationId: row.organisation_id as string,
      dimensions: dims.map((d) => (d === 'status_code' ? n(d) : (row[d] as string))),
      sums: {
        dims: [],
        requests: n('requests'),
        successes: n('successes'),
        cacheHits: n('cache_hits'),
        semanticHits: n('semantic_hits'),
        cost: n('cost'),
        totalTokens: n('total_tokens'),
        tokenRows: n('token_rows'),
        promptTokens: n('prompt_tokens'),
        promptRows: n('prompt_rows'),
        completionTokens: n('completion_tokens'),
        completionRows: n('completion_rows'),
        latencySum: n('latency_sum'),
        latencyMin: n('latency_min'),
        latencyMax: n('latency_max'),
        firstSeen: row.first_seen as string,
        lastSeen: row.last_seen as string,
        histogram,
      },
    };
  });
  return [...sumNarrow(entries, withPair, period).values()].map((entry) => entry.sums);
}
