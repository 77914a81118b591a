import type { FeedbackObject } from '../feedback/feedback-store.js';
import type { TraceSpanRow } from './trace-queries.js';

const round = (n: number) => Math.round(n * 1000) / 1000;

/**
 * One request as a span of its trace. A request sent without `x-service-span-id` is a span
 * whose id is its log id, so that every request appears once in the tree.
 */
export function toSpan(row: TraceSpanRow) {
  const started = Date.parse(row.created_at);
  return {
    span_id: row.span_id ?? row.id,
    parent_span_id: row.parent_span_id,
    span_name: row.span_name,
    log_id: row.id,
    request_id: row.request_id,
    workspace_id: row.workspace_id,
    api_key_id: row.api_key_id,
    started_at: row.created_at,
    ended_at: new Date(started + row.latency_ms).toISOString(),
    duration_ms: row.latency_ms,
    ttfb_ms: row.ttfb_ms,
    status_code: row.status_code,
    is_success: row.is_success === 1,
    error_code: row.error_code,
    provider: row.provider,
    model: row.model,
    endpoint_type: row.endpoint_type,
    cache_status: row.cache_status,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    total_tokens: row.total_tokens,
    cost: row.cost,
    cost_currency: row.cost_currency,
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : null,
  };
}

/** A whole trace: its spans in start order, their sums, and the feedback given on it. */
export function toTraceObject(traceId: string, rows: TraceSpanRow[], feedback: FeedbackObject[], truncated: boolean) {
  const spans = rows.map(toSpan);
  const start = Math.min(...spans.map((s) => Date.parse(s.started_at)));
  const end = Math.max(...spans.map((s) => Date.parse(s.ended_at)));
  const sum = (pick: (s: ReturnType<typeof toSpan>) => number | null) => {
    const values = spans.map(pick).filter((v): v is number => v !== null);
    return values.length === 0 ? null : round(values.reduce((a, b) => a + b, 0));
  };
  const weighted = feedback.reduce((acc, f) => acc + f.value * f.weight, 0);
  const weights = feedback.reduce((acc, f) => acc + f.weight, 0);
  return {
    trace_id: traceId,
    name: spans.find((s) => s.parent_span_id === null && s.span_name !== null)?.span_name ?? null,
    started_at: new Date(start).toISOString(),
    ended_at: new Date(end).toISOString(),
    duration_ms: round(end - start),
    requests: spans.length,
    errors: spans.filter((s) => !s.is_success).length,
    total_tokens: sum((s) => s.total_tokens),
    cost: sum((s) => s.cost),
    spans,
    truncated,
    feedback,
    weighted_feedback: weights > 0 ? round(weighted / weights) : null,
    object: 'trace' as const,
  };
}
