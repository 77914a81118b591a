import type { Statement } from 'better-sqlite3';
import { setImmediate as yieldToRequests } from 'node:timers/promises';
import { rawSqlite, type Db } from '../../storage/database.js';
import {
  periodStart,
  registerHistogramFunctions,
  ROLLUP_PERIODS,
  type RollupPeriod,
} from '../../storage/repositories/request-logs.js';
import { addRow, newTotals, type Totals } from './totals.js';

const HOUR_MS = 3_600_000;

/** Which requests a query counts: the caller's organisation, a time window (ms, both ends inclusive) and filters. */
export interface RowFilter {
  organisationId: string;
  from: number;
  to: number;
  workspaceId?: string | undefined;
  apiKeyId?: string | undefined;
  /** The API keys the caller may see (data visibility); null: every key. */
  visibleKeyIds: readonly string[] | null;
  provider?: string | undefined;
  model?: string | undefined;
  statusCodes?: readonly number[] | undefined;
  /** Only requests whose guardrails reached this verdict (passed, failed, denied). */
  guardrailVerdict?: string | undefined;
  /** Pairs the request's metadata must hold; such queries read request_logs, not rollups. */
  metadata?: Readonly<Record<string, string>> | undefined;
}

/** The request-log columns analytics group by. */
export type GroupColumn =
  | 'provider'
  | 'model'
  | 'status_code'
  | 'api_key_id'
  | 'config_id'
  | 'workspace_id'
  | 'credential_source'
  | 'prompt_id'
  | 'guardrail_verdict';

export type Grouping = { by: 'all' } | { by: 'column'; column: GroupColumn } | { by: 'time'; interval: 'hour' | 'day' };

/**
 * Group key → totals. Keys: the column's value ('' for NULL, numbers for status codes), the
 * bucket number for time (ms / interval), 0 for `all`.
 */
export type Aggregated = Map<string | number, Totals>;

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

const ROLLUP_MEASURES = `sum(requests), sum(successes), sum(cache_hits), sum(semantic_hits), total(cost), sum(total_tokens), sum(token_rows),
  sum(prompt_tokens), sum(prompt_rows), sum(completion_tokens), sum(completion_rows), total(latency_sum), min(latency_min), max(latency_max),
  min(first_seen), max(last_seen)`;
const RAW_MEASURES = `count(*), sum(is_success != 0), sum(cache_status IN ('HIT', 'SEMANTIC_HIT')), sum(cache_status = 'SEMANTIC_HIT'), total(cost),
  total(total_tokens), count(total_tokens), total(prompt_tokens), count(prompt_tokens), total(completion_tokens), count(completion_tokens),
  total(latency_ms), min(latency_ms), max(latency_ms), min(created_at), max(created_at)`;

const KEY_TABLE_COLUMNS: ReadonlySet<GroupColumn> = new Set(['workspace_id', 'api_key_id']);

/**
 * Reads analytics: rollups for whole hours (days, weeks), request_logs for the parts of hours at
 * the edges of the window and for every query with a metadata filter. Statements are prepared
 * once per shape; each part of a window is one statement, with a turn of the event loop between.
 */
export function createAnalyticsReader(db: Db) {
  const sqlite = rawSqlite(db);
  if (!sqlite) throw new Error('analytics read the SQLite database (openSqlite)');
  registerHistogramFunctions(sqlite);
  const statements = new Map<string, Statement>();
  const prepare = (text: string): Statement => {
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite.prepare(text).raw();
      statements.set(text, statement);
    }
    return statement;
  };

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
    if (filter.metadata && Object.keys(filter.metadata).length > 0) {
      collect(rawQuery(filter, grouping, options.latencies, filter.from, filter.to));
      return out;
    }
    const maxPeriod: RollupPeriod = grouping.by === 'time' ? (grouping.interval === 'hour' ? 1 : 24) : 672;
    const plan = planWindow(filter.from, filter.to, maxPeriod);
    const keyTable =
      filter.provider === undefined &&
      filter.model === undefined &&
      !(filter.statusCodes && filter.statusCodes.length > 0) &&
      filter.guardrailVerdict === undefined &&
      (grouping.by !== 'column' || KEY_TABLE_COLUMNS.has(grouping.column));
    for (const part of plan.rollups) {
      collect(rollupQuery(filter, grouping, options.latencies, keyTable, part));
      await yieldToRequests();
    }
    for (const part of plan.raw) collect(rawQuery(filter, grouping, options.latencies, part.from, part.to));
    return out;
  }

  function rollupQuery(
    filter: RowFilter,
    grouping: Grouping,
    latencies: boolean,
    keyTable: boolean,
    part: WindowPlan['rollups'][number],
  ): unknown[][] {
    const params: unknown[] = [filter.organisationId, part.period, part.start, part.end];
    const conditions = [
      'organisation_id = ?',
      'period = ?',
      'period_start >= ?',
      'period_start < ?',
      ...dimensionConditions(filter, params),
    ];
    const group =
      grouping.by === 'all'
        ? '0'
        : grouping.by === 'column'
          ? grouping.column
          : grouping.interval === 'hour'
            ? 'period_start'
            : 'period_start / 24';
    const text = `SELECT ${group} AS g, ${ROLLUP_MEASURES}, ${latencies ? 'svcgw_hist_sum(latency_hist)' : 'NULL'}
      FROM ${keyTable ? 'analytics_key_rollups' : 'analytics_rollups'} WHERE ${conditions.join(' AND ')}${groupBy(grouping)}`;
    return prepare(text).all(...params) as unknown[][];
  }

  function rawQuery(filter: RowFilter, grouping: Grouping, latencies: boolean, from: number, to: number): unknown[][] {
    const params: unknown[] = [filter.organisationId, new Date(from).toISOString(), new Date(to).toISOString()];
    const conditions = [
      'organisation_id = ?',
      'created_at >= ?',
      'created_at <= ?',
      ...dimensionConditions(filter, params),
    ];
    const pairs = Object.entries(filter.metadata ?? {});
    if (pairs.length > 0) {
      // The gateway stores metadata as compact JSON of strings, so a pair is held exactly when
      // `"key":"value"` occurs in the text (a quote inside a string is always escaped).
      conditions.push('metadata IS NOT NULL');
      for (const [key, value] of pairs) {
        conditions.push('instr(metadata, ?) > 0');
        params.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
      }
    }
    const group =
      grouping.by === 'all'
        ? '0'
        : grouping.by === 'column'
          ? grouping.column === 'status_code'
            ? 'status_code'
            : `coalesce(${grouping.column}, '')`
          : `CAST(unixepoch(created_at) / ${grouping.interval === 'hour' ? 3600 : 86400} AS INTEGER)`;
    const text = `SELECT ${group} AS g, ${RAW_MEASURES}, ${latencies ? 'svcgw_latency_hist(latency_ms)' : 'NULL'}
      FROM request_logs${pairs.length > 0 ? ' INDEXED BY request_logs_metadata_analytics' : ''} WHERE ${conditions.join(' AND ')}${groupBy(grouping)}`;
    return prepare(text).all(...params) as unknown[][];
  }

  return { aggregate };
}

export type AnalyticsReader = ReturnType<typeof createAnalyticsReader>;

/** A GROUP BY sorts every row, even on a constant: one group is an aggregate without it (twice as fast). */
const groupBy = (grouping: Grouping) => (grouping.by === 'all' ? '' : ' GROUP BY g');

/** Conditions on the dimensions (the same columns in rollups and request_logs); adds their parameters. */
function dimensionConditions(filter: RowFilter, params: unknown[]): string[] {
  const conditions: string[] = [];
  const equal = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    conditions.push(`${column} = ?`);
    params.push(value);
  };
  equal('workspace_id', filter.workspaceId);
  equal('api_key_id', filter.apiKeyId);
  if (filter.visibleKeyIds !== null) {
    conditions.push('api_key_id IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(filter.visibleKeyIds));
  }
  equal('provider', filter.provider);
  equal('model', filter.model);
  equal('guardrail_verdict', filter.guardrailVerdict);
  if (filter.statusCodes && filter.statusCodes.length > 0) {
    conditions.push('status_code IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(filter.statusCodes));
  }
  return conditions;
}
