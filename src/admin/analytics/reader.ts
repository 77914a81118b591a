import type { Statement } from 'better-sqlite3';
import { setImmediate as yieldToRequests } from 'node:timers/promises';
import {
  COMBINATION_SEPARATOR,
  combinationName,
  combinationValue,
  entryKeys,
} from '../../config/rollup-metadata-keys.js';
import { rawSqlite, type Db } from '../../storage/database.js';
import {
  METADATA_ROLLUP_MAX_VALUE,
  periodStart,
  registerHistogramFunctions,
  ROLLUP_PERIODS,
  type RollupPeriod,
} from '../../storage/repositories/request-logs.js';
import { narrowPlan, type NarrowPlan } from './narrow-plan.js';
import { POSTGRES, postgresRunner, SQLITE, type AnalyticsDialect } from './reader-dialects.js';
import type { GroupColumn, Grouping, RowFilter } from './row-filter.js';
import { addRow, newTotals, type Totals } from './totals.js';

export type { GroupColumn, Grouping, RowFilter } from './row-filter.js';

const HOUR_MS = 3_600_000;

/**
 * Whether a filter has conditions that `analytics_rollups` cannot answer (metadata, per-request
 * conditions); a pair of a summed key, or two of a summed combination, may still be read from
 * metadata rollups.
 */
export const readsRows = (filter: RowFilter): boolean =>
  Object.keys(filter.metadata ?? {}).length > 0 || (filter.rows?.length ?? 0) > 0;

/**
 * Group key → totals. Keys: the column's value ('' for NULL, numbers for status codes), the
 * bucket number for time (ms / interval), 0 for `all`.
 */
export type Aggregated = Map<string | number, Totals>;

/**
 * What metadata rollups answer a filter's metadata with: a summed key and its value, or a summed
 * combination of two keys and both values encoded as one; and from which hour they hold it whole.
 */
interface RolledUpPair {
  key: string;
  value: string;
  sinceHour: number;
}

/**
 * The filter's metadata as `analytics_metadata_rollups` can answer it, if they can: exactly one
 * pair of a summed key, or two pairs whose keys form a summed combination (`keys`: the summed
 * names and their first whole hour), a value short enough to be summed, and no per-request condition.
 */
export function rolledUpPair(filter: RowFilter, keys: ReadonlyMap<string, number>): RolledUpPair | null {
  const pairs = Object.entries(filter.metadata ?? {});
  if (pairs.length === 0 || pairs.length > 2 || (filter.rows?.length ?? 0) > 0) return null;
  // A key holding the separator would be read as (part of) a combination's name.
  if (pairs.some(([key]) => key.includes(COMBINATION_SEPARATOR))) return null;
  const key = combinationName(pairs.map(([k]) => k));
  const value = pairs.length === 1 ? pairs[0]![1] : combinationValue(entryKeys(key).map((k) => filter.metadata![k]!));
  const sinceHour = keys.get(key);
  if (sinceHour === undefined || value.length > METADATA_ROLLUP_MAX_VALUE) return null;
  return { key, value, sinceHour };
}

export interface WindowPlan {
  /** Parts of hours, read from request_logs (ms, inclusive). */
  raw: Array<{ from: number; to: number }>;
  /** Whole hours, read from rollups: periods of `period` hours from `start` (inclusive) to `end` (exclusive), in hours since the epoch. */
  rollups: Array<{ period: RollupPeriod; start: number; end: number }>;
}

/**
 * Splits a window into the parts of hours at its edges (request_logs) and whole hours
 * (rollups), taking the longest whole periods that fit (four weeks, weeks, days, hours), never one longer than
 * `maxPeriod` (graphs need buckets no longer than their interval).
 */
export function planWindow(from: number, to: number, maxPeriod: RollupPeriod): WindowPlan {
  const firstHour = Math.ceil(from / HOUR_MS);
  const endHour = Math.floor((to + 1) / HOUR_MS);
  if (firstHour >= endHour) return { raw: from <= to ? [{ from, to }] : [], rollups: [] };
  const raw = [];
  if (from < firstHour * HOUR_MS) raw.push({ from, to: firstHour * HOUR_MS - 1 });
  if (to >= endHour * HOUR_MS) raw.push({ from: endHour * HOUR_MS, to });
  const periods = ROLLUP_PERIODS.filter((p) => p <= maxPeriod).reverse();
  const rollups: WindowPlan['rollups'] = [];
  for (let hour = firstHour; hour < endHour;) {
    const period = periods.find((p) => periodStart(hour, p) === hour && hour + p <= endHour) ?? 1;
    const last = rollups.at(-1);
    if (last && last.period === period && last.end === hour) last.end += period;
    else rollups.push({ period, start: hour, end: hour + period });
    hour += period;
  }
  return { raw, rollups };
}

const KEY_TABLE_COLUMNS: ReadonlySet<GroupColumn> = new Set(['workspace_id', 'api_key_id']);

/**
 * Runs analytics statements written with `?` placeholders on either engine and returns rows as
 * arrays. On SQLite each statement is prepared once per text; the histogram functions are
 * registered on the connection.
 */
export function createStatementRunner(db: Db): {
  dialect: AnalyticsDialect;
  run: (text: string, params: unknown[]) => Promise<unknown[][]>;
} {
  const sqlite = rawSqlite(db);
  const statements = new Map<string, Statement>();
  const prepare = (text: string): Statement => {
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite!.prepare(text).raw();
      statements.set(text, statement);
    }
    return statement;
  };
  if (sqlite) registerHistogramFunctions(sqlite);
  return {
    dialect: sqlite ? SQLITE : POSTGRES,
    run: sqlite ? (text, params) => Promise.resolve(prepare(text).all(...params) as unknown[][]) : postgresRunner(db),
  };
}

/**
 * Reads analytics: rollups for whole hours (days, weeks) — the narrow rollups of one dimension
 * when the query names one at most (narrow-plan.ts), else the key, metadata or full rollups —
 * request_logs for the parts of hours at
 * the edges of the window and for every query with a metadata filter that metadata rollups do not
 * answer (`rolledUpPair`). Statements are prepared
 * once per shape; each part of a window is one statement, with a turn of the event loop between.
 */
export function createAnalyticsReader(db: Db) {
  const { dialect, run } = createStatementRunner(db);

  async function aggregate(
    filter: RowFilter,
    grouping: Grouping,
    options: { latencies: boolean },
  ): Promise<Aggregated> {
    const out: Aggregated = new Map();
    const collect = (rows: unknown[][]) => {
      for (const row of rows) {
        const key = row[0] as string | number;
        if (!row[1]) continue; // a query without GROUP BY over no rows
        let t = out.get(key);
        if (!t) out.set(key, (t = newTotals(options.latencies)));
        addRow(t, row);
      }
    };
    let pair: RolledUpPair | null = null;
    let from = filter.from;
    if (readsRows(filter)) {
      pair = rolledUpPair(filter, await metadataKeys());
      // Before the key was summed, and all of a filter rollups cannot answer: request_logs.
      const rolledFrom = pair ? Math.max(from, pair.sinceHour * HOUR_MS) : Infinity;
      if (rolledFrom > from)
        collect(await rawQuery(filter, grouping, options.latencies, from, Math.min(filter.to, rolledFrom - 1)));
      if (rolledFrom > filter.to) return out;
      from = rolledFrom;
    }
    const maxPeriod: RollupPeriod = grouping.by === 'time' ? (grouping.interval === 'hour' ? 1 : 24) : 672;
    const plan = planWindow(from, filter.to, maxPeriod);
    const narrow = narrowPlan(filter, grouping, pair);
    // Narrow rows are whole only from this hour until the backfill has summed the older rollups.
    const narrowSince = narrow ? await narrowSinceHour() : Infinity;
    const table = pair
      ? 'analytics_metadata_rollups'
      : filter.provider === undefined &&
          filter.model === undefined &&
          !(filter.statusCodes && filter.statusCodes.length > 0) &&
          filter.guardrailVerdict === undefined &&
          (grouping.by !== 'column' || KEY_TABLE_COLUMNS.has(grouping.column))
        ? 'analytics_key_rollups'
        : 'analytics_rollups';
    for (const part of plan.rollups) {
      collect(
        await (narrow && part.start >= narrowSince
          ? narrowQuery(filter, narrow, options.latencies, part)
          : rollupQuery(filter, grouping, options.latencies, table, pair, part)),
      );
      await yieldToRequests();
    }
    for (const part of plan.raw) collect(await rawQuery(filter, grouping, options.latencies, part.from, part.to));
    return out;
  }

  /** The first period start from which narrow rollups are whole (a one-row table, read per query). */
  async function narrowSinceHour(): Promise<number> {
    const rows = await run('SELECT since_hour FROM analytics_narrow_since', []);
    return rows.length === 0 ? Infinity : Number(rows[0]![0]);
  }

  /** The summed metadata keys and the first hour each is whole from (a short table, read per query). */
  async function metadataKeys(): Promise<Map<string, number>> {
    const rows = await run('SELECT metadata_key, since_hour FROM analytics_metadata_keys', []);
    return new Map(rows.map((row) => [row[0] as string, Number(row[1])]));
  }

  function rollupQuery(
    filter: RowFilter,
    grouping: Grouping,
    latencies: boolean,
    table: 'analytics_rollups' | 'analytics_key_rollups' | 'analytics_metadata_rollups',
    pair: RolledUpPair | null,
    part: WindowPlan['rollups'][number],
  ): Promise<unknown[][]> {
    const params: unknown[] = [filter.organisationId, part.period, part.start, part.end];
    const conditions = [
      'organisation_id = ?',
      'period = ?',
      'period_start >= ?',
      'period_start < ?',
      ...dimensionConditions(filter, params, dialect),
    ];
    if (pair) {
      conditions.push('metadata_key = ?', 'metadata_value = ?');
      params.push(pair.key, pair.value);
    }
    const group =
      grouping.by === 'all'
        ? '0'
        : grouping.by === 'column'
          ? grouping.column
          : grouping.interval === 'hour'
            ? 'period_start'
            : 'period_start / 24';
    const text = `SELECT ${group} AS g, ${dialect.rollupMeasures}, ${latencies ? dialect.rollupHistogram : 'NULL'} AS h
      FROM ${table} WHERE ${conditions.join(' AND ')}${groupBy(grouping)}`;
    return run(text, params);
  }

  /** One part of a window from `analytics_narrow_rollups`, as `plan` says. */
  function narrowQuery(
    filter: RowFilter,
    plan: NarrowPlan,
    latencies: boolean,
    part: WindowPlan['rollups'][number],
  ): Promise<unknown[][]> {
    const params: unknown[] = [filter.organisationId, plan.metadataKey, plan.metadataValue, plan.dimension];
    const conditions = ['organisation_id = ?', 'metadata_key = ?', 'metadata_value = ?', 'dimension = ?'];
    if (plan.values) {
      conditions.push(dialect.inList('value'));
      params.push(dialect.list(plan.values));
    }
    conditions.push('period = ?', 'period_start >= ?', 'period_start < ?');
    params.push(part.period, part.start, part.end);
    if (filter.workspaceId !== undefined) {
      conditions.push('workspace_id = ?');
      params.push(filter.workspaceId);
    }
    const text = `SELECT ${plan.group} AS g, ${dialect.rollupMeasures}, ${latencies ? dialect.rollupHistogram : 'NULL'} AS h
      FROM analytics_narrow_rollups WHERE ${conditions.join(' AND ')}${plan.group === '0' ? '' : ' GROUP BY g'}`;
    return run(text, params);
  }

  function rawQuery(
    filter: RowFilter,
    grouping: Grouping,
    latencies: boolean,
    from: number,
    to: number,
  ): Promise<unknown[][]> {
    const params: unknown[] = [];
    const conditions = logConditions(filter, from, to, params, dialect);
    const pairs = Object.keys(filter.metadata ?? {});
    const group =
      grouping.by === 'all'
        ? '0'
        : grouping.by === 'column'
          ? grouping.column === 'status_code'
            ? 'status_code'
            : `coalesce(${grouping.column}, '')`
          : dialect.epochBucket('created_at', grouping.interval === 'hour' ? 3600 : 86400);
    const text = `SELECT ${group} AS g, ${dialect.rawMeasures}, ${latencies ? dialect.rawHistogram : 'NULL'} AS h
      FROM request_logs${pairs.length > 0 ? dialect.metadataIndex : ''} WHERE ${conditions.join(' AND ')}${groupBy(grouping)}`;
    return run(text, params);
  }

  return { aggregate };
}

export type AnalyticsReader = ReturnType<typeof createAnalyticsReader>;

/** A GROUP BY sorts every row, even on a constant: one group is an aggregate without it (twice as fast). */
const groupBy = (grouping: Grouping) => (grouping.by === 'all' ? '' : ' GROUP BY g');

/**
 * The conditions on request_logs rows of a filter between `from` and `to` (ms, inclusive): the
 * organisation, the window, the dimensions and the metadata pairs; adds their parameters.
 */
export function logConditions(
  filter: RowFilter,
  from: number,
  to: number,
  params: unknown[],
  dialect: AnalyticsDialect,
): string[] {
  params.push(filter.organisationId, new Date(from).toISOString(), new Date(to).toISOString());
  const conditions = [
    'organisation_id = ?',
    'created_at >= ?',
    'created_at <= ?',
    ...dimensionConditions(filter, params, dialect),
  ];
  return [...conditions, ...metadataConditions(filter, params, dialect), ...requestConditions(filter, params)];
}

/** The per-request conditions of a filter; adds their parameters. */
export function requestConditions(filter: RowFilter, params: unknown[]): string[] {
  for (const condition of filter.rows ?? []) params.push(...condition.params);
  return (filter.rows ?? []).map((condition) => condition.sql);
}

/** Conditions on request_logs.metadata holding every pair of the filter; adds their parameters. */
export function metadataConditions(filter: RowFilter, params: unknown[], dialect: AnalyticsDialect): string[] {
  const pairs = Object.entries(filter.metadata ?? {});
  if (pairs.length === 0) return [];
  // The gateway stores metadata as compact JSON of strings, so a pair is held exactly when
  // `"key":"value"` occurs in the text (a quote inside a string is always escaped).
  const conditions = ['metadata IS NOT NULL'];
  for (const [key, value] of pairs) {
    conditions.push(dialect.contains('metadata'));
    params.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
  }
  return conditions;
}

/** Conditions on the dimensions (the same columns in rollups and request_logs); adds their parameters. */
export function dimensionConditions(filter: RowFilter, params: unknown[], dialect: AnalyticsDialect): string[] {
  const conditions: string[] = [];
  const equal = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    conditions.push(`${column} = ?`);
    params.push(value);
  };
  equal('workspace_id', filter.workspaceId);
  equal('api_key_id', filter.apiKeyId);
  if (filter.visibleKeyIds !== null) {
    conditions.push(dialect.inList('api_key_id'));
    params.push(dialect.list(filter.visibleKeyIds));
  }
  equal('provider', filter.provider);
  equal('model', filter.model);
  equal('guardrail_verdict', filter.guardrailVerdict);
  if (filter.statusCodes && filter.statusCodes.length > 0) {
    conditions.push(dialect.inList('status_code'));
    params.push(dialect.list(filter.statusCodes));
  }
  return conditions;
}
