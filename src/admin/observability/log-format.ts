import type { RequestLogInsert } from '../../storage/repositories/request-logs.js';
import { toLogObject } from '../logs/log-object.js';
import type { FeedbackObject } from './feedback/feedback-store.js';

/**
 * `log_format` of GET /v1/logs/:id (release 1.12): which shape the record comes in.
 * `default` is svcgw's flat record (as the list shows it, plus bodies); `structured` is the
 * established gateway's LogObject: `request`, `response` and a `metrics` block with its field
 * names, for tools written against that gateway. Either way the record says its `log_format`.
 */
export const LOG_FORMATS = ['default', 'structured'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const parse = (text: string | null | undefined): unknown => {
  if (text === null || text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

const sumOrNull = (a: number | null | undefined, b: number | null | undefined) =>
  (a === null || a === undefined) && (b === null || b === undefined) ? null : (a ?? 0) + (b ?? 0);

function structured(row: RequestLogInsert, feedback: FeedbackObject[] | undefined) {
  const metadata = row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : {};
  return {
    _id: row.id,
    organisation_id: row.organisation_id,
    created_at: row.created_at,
    request: {
      url: row.path,
      method: row.method,
      body: parse(row.request_body),
      serviceHeaders: {
        'x-service-trace-id': row.trace_id,
        ...(row.span_id ? { 'x-service-span-id': row.span_id } : {}),
        ...(row.parent_span_id ? { 'x-service-parent-span-id': row.parent_span_id } : {}),
        ...(row.span_name ? { 'x-service-span-name': row.span_name } : {}),
        ...(row.metadata ? { 'x-service-metadata': row.metadata } : {}),
      },
    },
    response: { status: row.status_code, body: parse(row.response_body), responseTime: row.latency_ms },
    metrics: {
      id: row.id,
      organisation_id: row.organisation_id,
      workspace_id: row.workspace_id,
      api_key_id: row.api_key_id,
      ai_org: row.provider ?? null,
      ai_model: row.model ?? null,
      req_units: row.prompt_tokens ?? null,
      res_units: row.completion_tokens ?? null,
      total_units: row.total_tokens ?? sumOrNull(row.prompt_tokens, row.completion_tokens),
      cost: row.cost ?? null,
      cost_currency: row.cost_currency,
      is_success: row.is_success === 1,
      request_url: row.path,
      request_method: row.method,
      response_status_code: row.status_code,
      response_time: row.latency_ms,
      stream_mode: row.is_stream === 1,
      cache_status: row.cache_status,
      retry_success_count: row.retry_count ?? 0,
      config_id: row.config_id ?? null,
      trace_id: row.trace_id,
      span_id: row.span_id ?? null,
      span_name: row.span_name ?? null,
      parent_span_id: row.parent_span_id ?? null,
      'metadata.key': Object.keys(metadata),
      'metadata.value': Object.values(metadata),
    },
    ...(feedback ? { feedback } : {}),
    log_format: 'structured' as const,
  };
}

/**
 * The record of GET /v1/logs/:id in the format asked for, with the feedback given on its
 * trace (from `feedbackForTraces`) when the caller passes it.
 */
export function formatLog(row: RequestLogInsert, format: LogFormat = 'default', feedback?: FeedbackObject[]) {
  if (format === 'structured') return structured(row, feedback);
  return { ...toLogObject(row, true), ...(feedback ? { feedback } : {}), log_format: 'default' as const };
}
