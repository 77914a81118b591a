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
  /** passed, failed (let through with 246) or denied (446); null when no guardrail ran. */
  guardrail_verdict?: 'passed' | 'failed' | 'denied' | null;
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
  /** Requests a guardrail denied (446; also counted in errors) and let through with a warning (246). */
  denied: number;
  warned: number;
  tokens: number;
  cost: number;
  latencyMs: number;
}

export const EMPTY_TOTALS: Totals = { requests: 0, errors: 0, denied: 0, warned: 0, tokens: 0, cost: 0, latencyMs: 0 };

export function addToTotals(totals: Totals, record: LogRecord): Totals {
  return {
    requests: totals.requests + 1,
    errors: totals.errors + (record.status_code >= 400 ? 1 : 0),
    denied: totals.denied + (guardrailMark(record)?.kind === 'denied' ? 1 : 0),
    warned: totals.warned + (guardrailMark(record)?.kind === 'warned' ? 1 : 0),
    tokens: totals.tokens + (record.total_tokens ?? 0),
    cost: totals.cost + (record.cost ?? 0),
    latencyMs: totals.latencyMs + record.latency_ms,
  };
}

export type StatusColour = 'green' | 'yellow' | 'red' | 'cyan';

/** A guardrail's denial (446) is red like a server error; its warning (246) yellow like a client error. */
export const statusColour = (status: number): StatusColour =>
  status >= 500 || status === GUARDRAIL_DENIED
    ? 'red'
    : status >= 400 || status === GUARDRAIL_WARNED
      ? 'yellow'
      : status >= 300
        ? 'cyan'
        : 'green';

const GUARDRAIL_DENIED = 446;
const GUARDRAIL_WARNED = 246;

export interface GuardrailMark {
  kind: 'denied' | 'warned';
  /** For a narrow column (the error column at 80 columns is 10 wide). */
  short: string;
  long: string;
  colour: StatusColour;
}

/**
 * How a request a guardrail stopped or warned about is marked, in words rather than a bare
 * 446/246 (the established gateway's statuses, which few people know): from the record's
 * verdict, or its status when an older server sends no verdict.
 */
export function guardrailMark(record: Pick<LogRecord, 'status_code' | 'guardrail_verdict'>): GuardrailMark | null {
  const verdict =
    record.guardrail_verdict ??
    (record.status_code === GUARDRAIL_DENIED ? 'denied' : record.status_code === GUARDRAIL_WARNED ? 'failed' : null);
  if (verdict === 'denied' && record.status_code === GUARDRAIL_DENIED)
    return { kind: 'denied', short: 'DENIED', long: 'DENIED by guardrail', colour: 'red' };
  if (verdict === 'failed' && record.status_code < 400)
    return { kind: 'warned', short: 'GUARD WARN', long: 'guardrail warning', colour: 'yellow' };
  return null;
}

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
  const guarded =
    (totals.denied > 0 ? ` · ${totals.denied} denied` : '') + (totals.warned > 0 ? ` · ${totals.warned} warned` : '');
  return `${totals.requests} requests · ${totals.errors} errors${guarded} · ${totals.tokens} tokens · ${formatCost(totals.cost)} · avg ${formatLatency(avg)}`;
}
