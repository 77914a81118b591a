/** The fields of a log record that the CLI shows (as `GET /v1/logs` and the stream send them). */
export interface LogRecord {
  id: string;
  created_at: string;
  status_code: number;
  is_success?: boolean;
  provider: string | null;
  model: string | null;
  endpoint_type?: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cost: number | null;
  latency_ms: number;
  workspace_id?: string;
  /** The gateway's error code of a failed request (UNKNOWN_PROVIDER, UPSTREAM_TIMEOUT, …). */
  error_code?: string | null;
}

/** A request that has begun and has no record yet (`event: start` of the stream). */
export interface InFlight {
  id: string;
  created_at: string;
  model: string | null;
  endpoint_type?: string;
}

export interface Totals {
  requests: number;
  errors: number;
  tokens: number;
  cost: number;
  latencyMs: number;
}

export const EMPTY_TOTALS: Totals = { requests: 0, errors: 0, tokens: 0, cost: 0, latencyMs: 0 };

export function addToTotals(totals: Totals, record: LogRecord): Totals {
  return {
    requests: totals.requests + 1,
    errors: totals.errors + (record.status_code >= 400 ? 1 : 0),
    tokens: totals.tokens + (record.total_tokens ?? 0),
    cost: totals.cost + (record.cost ?? 0),
    latencyMs: totals.latencyMs + record.latency_ms,
  };
}

export type StatusColour = 'green' | 'yellow' | 'red' | 'cyan';

export const statusColour = (status: number): StatusColour =>
  status >= 500 ? 'red' : status >= 400 ? 'yellow' : status >= 300 ? 'cyan' : 'green';

/** Local wall-clock time, HH:MM:SS. */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toTimeString().slice(0, 8);
}

/** Unknown cost is `-`, never $0: a model without a price is not free. */
export function formatCost(cost: number | null): string {
  if (cost === null) return '-';
  return `$${cost < 0.01 && cost > 0 ? cost.toPrecision(2) : cost.toFixed(cost >= 100 ? 2 : 4)}`;
}

export function formatTokens(record: Pick<LogRecord, 'prompt_tokens' | 'completion_tokens' | 'total_tokens'>): string {
  if (record.prompt_tokens !== null && record.completion_tokens !== null)
    return `${record.prompt_tokens}→${record.completion_tokens}`;
  return record.total_tokens === null ? '-' : String(record.total_tokens);
}

export const formatLatency = (ms: number): string =>
  ms >= 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms)}ms`;

export function formatTotals(totals: Totals): string {
  const avg = totals.requests === 0 ? 0 : totals.latencyMs / totals.requests;
  return `${totals.requests} requests · ${totals.errors} errors · ${totals.tokens} tokens · ${formatCost(totals.cost)} · avg ${formatLatency(avg)}`;
}
