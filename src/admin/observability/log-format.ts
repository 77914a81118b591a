import type { RequestLogInsert } from '../../storage/repositories/request-logs.js';
import { toLogObject } from '../logs/log-object.js';
import type { FeedbackObject } from './feedback/feedback-store.js';
import { lastUsedOption } from './last-used-option.js';

/**
 * `log_format` of GET /v1/logs/:id: which shape the record comes in. `structured` (the default)
 * is the reference's LogObject: `request`, `response` and a `metrics` block with its field
 * names, for tools written against the reference; `flat` is svcgw's own record (as the list
 * shows it, plus bodies). Either way the record says its `log_format`.
 */
export const LOG_FORMATS = ['structured', 'flat'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const REFERENCE_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']);

const parse = (text: string | null | undefined): unknown => {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

const sumOrNull = (a: number | null | undefined, b: number | null | undefined) =>
  (a === null || a === undefined) && (b === null || b === undefined) ? null : (a ?? 0) + (b ?? 0);

/** The object without its null and undefined fields: the reference omits what it does not know. */
function known<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== null && value !== undefined),
  ) as Partial<T>;
}

/** `body` when a body was recorded: the reference's body is optional, not nullable. */
const bodyOf = (text: string | null | undefined) => {
  const body = parse(text);
  return body === undefined ? {} : { body };
};

/**
 * The reference's AnalyticsMetrics names, in its units (cost in US cents, whole milliseconds),
 * then svcgw's other fields of the flat record under their flat names (`cost_usd` and
 * `latency_ms` keep the exact values). Fields without a value are left out.
 */
function metrics(row: RequestLogInsert, flat: ReturnType<typeof toLogObject>, optionIndex: number | undefined) {
  const metadata = flat.metadata ?? {};
  const {
    id: _id,
    organisation_id: _organisation,
    api_key_id: apiKeyId,
    provider: _provider,
    model: _model,
    prompt_tokens: _prompt,
    completion_tokens: _completion,
    total_tokens: _total,
    cost: _cost,
    cost_currency: _currency,
    is_success: _success,
    path: _path,
    method: _method,
    status_code: _status,
    stream: _stream,
    cache_status: _cache,
    retry_count: _retries,
    config_id: _config,
    prompt_id: _promptId,
    trace_id: _trace,
    span_id: _span,
    span_name: _spanName,
    parent_span_id: _parent,
    metadata: _metadata,
    created_at: _created,
    object: _object,
    request_body: _requestBody,
    response_body: _responseBody,
    ...svcgwOnly
  } = flat;
  return known({
    id: row.id,
    organisation_id: row.organisation_id,
    api_key_id: apiKeyId,
    prompt_id: row.prompt_id,
    config_id: row.config_id,
    ai_org: row.provider,
    ai_model: row.model,
    req_units: row.prompt_tokens,
    res_units: row.completion_tokens,
    total_units: row.total_tokens ?? sumOrNull(row.prompt_tokens, row.completion_tokens),
    cost: row.cost === null || row.cost === undefined ? null : Number((row.cost * 100).toPrecision(12)),
    cost_currency: row.cost_currency,
    is_success: row.is_success === 1,
    request_url: row.path,
    request_method: row.method,
    response_status_code: row.status_code,
    response_time: Math.round(row.latency_ms),
    stream_mode: row.is_stream === 1,
    cache_status: row.cache_status,
    retry_success_count: row.retry_count ?? 0,
    last_used_option_index: optionIndex,
    trace_id: row.trace_id,
    span_id: row.span_id,
    span_name: row.span_name,
    parent_span_id: row.parent_span_id,
    'metadata.key': Object.keys(metadata),
    'metadata.value': Object.values(metadata),
    cost_usd: row.cost,
    ...svcgwOnly,
  });
}

function structured(row: RequestLogInsert, feedback: FeedbackObject[] | undefined) {
  const flat = toLogObject(row, true);
  const option = lastUsedOption(row.attempts);
  const method = row.method.toUpperCase();
  return {
    _id: row.id,
    organisation_id: row.organisation_id,
    created_at: row.created_at,
    request: {
      url: row.path,
      method: REFERENCE_METHODS.has(method) ? method : row.method,
      ...bodyOf(row.request_body),
      serviceHeaders: {
        'x-service-trace-id': row.trace_id,
        ...(row.span_id ? { 'x-service-span-id': row.span_id } : {}),
        ...(row.parent_span_id ? { 'x-service-parent-span-id': row.parent_span_id } : {}),
        ...(row.span_name ? { 'x-service-span-name': row.span_name } : {}),
        ...(row.metadata ? { 'x-service-metadata': row.metadata } : {}),
      },
    },
    response: {
      status: row.status_code,
      ...bodyOf(row.response_body),
      responseTime: Math.round(row.latency_ms),
      lastUsedOptionJsonPath: option.jsonPath,
      ...(option.target === undefined ? {} : { target: option.target }),
    },
    metrics: metrics(row, flat, option.index),
    ...(feedback ? { feedback } : {}),
    log_format: 'structured' as const,
  };
}

/**
 * The record of GET /v1/logs/:id in the format asked for, with the feedback given on its
 * trace (from `feedbackForTraces`) when the caller passes it.
 */
export function formatLog(row: RequestLogInsert, format: LogFormat = 'structured', feedback?: FeedbackObject[]) {
  if (format === 'structured') return structured(row, feedback);
  return { ...toLogObject(row, true), ...(feedback ? { feedback } : {}), log_format: 'flat' as const };
}
