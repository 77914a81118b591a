import { invalid } from '../../lib/errors.js';
import type { GroupColumn } from './reader.js';
import { percentile, type Totals } from './totals.js';

/** The spec's group-by names and the request-log column behind each. */
export const DIMENSIONS = {
  ai_service: 'provider',
  model: 'model',
  status_code: 'status_code',
  api_key: 'api_key_id',
  config: 'config_id',
  workspace: 'workspace_id',
  provider: 'credential_source',
  prompt: 'prompt_id',
  guardrail_verdict: 'guardrail_verdict',
} as const satisfies Record<string, GroupColumn>;

/** A group's value as the API shows it: rollups and queries use '' for NULL. */
export const groupLabel = (key: string | number): string | number | null => (key === '' ? null : key);

export type GroupBy = keyof typeof DIMENSIONS;
export const GROUP_BYS = Object.keys(DIMENSIONS) as GroupBy[];

export function parseGroupBy(value: string): GroupBy {
  if (!Object.hasOwn(DIMENSIONS, value))
    throw invalid('groupBy', `Unknown groupBy ${value}; use one of ${GROUP_BYS.join(', ')}.`);
  return value as GroupBy;
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));
const average = (sum: number, n: number, digits = 3) => (n === 0 ? null : round(sum / n, digits));
/** Sums of floating-point costs keep 12 significant digits: no 0.30000000000000004. */
const money = (value: number) => Number(value.toPrecision(12));
const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : null);

interface ColumnDef {
  needsLatencies?: boolean;
  value(t: Totals): number | string | null;
}

/** The columns `?columns=` selects, in the spec's order. Rates are fractions from 0 to 1. */
export const COLUMNS = {
  cost: { value: (t) => money(t.cost) },
  total_tokens: { value: (t) => t.totalTokens },
  avg_tokens: { value: (t) => average(t.totalTokens, t.tokenRows) },
  avg_input_tokens: { value: (t) => average(t.promptTokens, t.promptRows) },
  avg_output_tokens: { value: (t) => average(t.completionTokens, t.completionRows) },
  avg_latency: { value: (t) => average(t.latencySum, t.requests) },
  p95_latency: { needsLatencies: true, value: (t) => percentile(t, 0.95) },
  p99_latency: { needsLatencies: true, value: (t) => percentile(t, 0.99) },
  success_rate: { value: (t) => average(t.successes, t.requests, 4) },
  error_count: { value: (t) => t.requests - t.successes },
  cache_hit_rate: { value: (t) => average(t.cacheHits, t.requests, 4) },
  last_seen: { value: (t) => iso(t.last) },
  first_seen: { value: (t) => iso(t.first) },
} satisfies Record<string, ColumnDef>;

export type ColumnName = keyof typeof COLUMNS;
export const COLUMN_NAMES = Object.keys(COLUMNS) as ColumnName[];

/** `cost,p95_latency` → the columns, in the order given, without repeats; unknown names are a 400. */
export function parseColumns(value: string | undefined): ColumnName[] {
  if (value === undefined || value.trim() === '') return [];
  const names = [
    ...new Set(
      value
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = names.filter((name) => !Object.hasOwn(COLUMNS, name));
  if (unknown.length > 0)
    throw invalid(
      'columns',
      `Unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; use any of ${COLUMN_NAMES.join(', ')}.`,
    );
  return names as ColumnName[];
}

export const needsLatencies = (columns: readonly ColumnName[]) =>
  columns.some((c) => (COLUMNS[c] as ColumnDef).needsLatencies === true);

/** `requests` plus the selected columns of one group. */
export function columnValues(t: Totals, columns: readonly ColumnName[]): Record<string, number | string | null> {
  const out: Record<string, number | string | null> = { requests: t.requests };
  for (const name of columns) out[name] = (COLUMNS[name] as ColumnDef).value(t);
  return out;
}

export const totalsHelpers = { round, average, money, iso };
