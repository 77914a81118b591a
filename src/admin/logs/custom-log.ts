import { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import { newTimeOrderedId } from '../../lib/ids.js';
import { ENDPOINT_PATHS } from '../../providers/endpoints.js';
import { listProviders } from '../../providers/registry.js';
import { usageFromBody, type TokenUsage } from '../../providers/usage.js';
import type { RequestLogInsert } from '../../storage/repositories/request-logs.js';

/** At most this many records per call; bigger imports send several. */
export const MAX_CUSTOM_LOGS = 1000;
const TRACE_ID_RE = /^[A-Za-z0-9_.:/-]{1,128}$/;
/** The metadata keys that are the request's tracing fields rather than metadata. */
const TRACING_KEYS = ['trace_id', 'span_id', 'parent_span_id', 'span_name'] as const;

const headersRefused = (where: string) =>
  z
    .never({
      error: `${where}.headers is not stored: request logs keep no headers, since headers carry credentials. Leave it out.`,
    })
    .optional();

const jsonObject = z.record(z.string(), z.unknown());

/** One record, as the reference gateway's `CustomLog` names its fields. */
export const customLog = z
  .object({
    request: z
      .object({
        url: z
          .string()
          .min(1)
          .max(2048)
          .refine((url) => url.startsWith('/') || /^https?:\/\//i.test(url), {
            message: 'request.url must be an http(s) URL or a path beginning with /.',
          })
          .describe('The URL that was called; stored without its query string and credentials.'),
        method: z.enum(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']).default('POST'),
        headers: headersRefused('request'),
        body: jsonObject.describe('The request body; `model` and `stream` are read from it.'),
      })
      .strict(),
    response: z
      .object({
        status: z.number().int().min(100).max(599).default(200),
        headers: headersRefused('response'),
        body: jsonObject.describe('The response body; `usage` and `model` are read from it.'),
        response_time: z.number().int().min(0).max(86_400_000).default(0).describe('Latency in milliseconds.'),
      })
      .strict(),
    metadata: z
      .record(z.string().min(1).max(128), z.string().max(1024))
      .refine((m) => Object.keys(m).length <= 64, { message: 'metadata holds at most 64 keys.' })
      .refine((m) => m.trace_id === undefined || TRACE_ID_RE.test(m.trace_id), {
        message: 'metadata.trace_id must be 1–128 characters of A-Z a-z 0-9 _ . : / -.',
      })
      .optional()
      .describe('Strings; trace_id, span_id, parent_span_id and span_name are the tracing fields.'),
  })
  .strict();

/** A record or an array of them (the reference accepts both). */
export const customLogsBody = z.preprocess(
  (body: unknown): unknown[] => (Array.isArray(body) ? (body as unknown[]) : [body]),
  z.array(customLog).min(1).max(MAX_CUSTOM_LOGS),
);

export type CustomLog = z.infer<typeof customLog>;

/** What the audit record keeps of a body of records: how many, never their contents (prompts). */
export function auditSummary(body: unknown): unknown {
  return { records: Array.isArray(body) ? body.length : 1 };
}

const SAFE_URL_PATH = (url: string): { path: string; stored: string } => {
  if (url.startsWith('/')) {
    const path = url.split(/[?#]/, 1)[0] ?? url;
    return { path, stored: path };
  }
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (!parsed) return { path: url, stored: url.split(/[?#]/, 1)[0] ?? url };
  return { path: parsed.pathname, stored: `${parsed.protocol}//${parsed.host}${parsed.pathname}` };
};

/** The provider whose default host the URL names (`api.openai.com` → openai), if any. */
export function providerOfUrl(url: string): string | null {
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) return null;
  const host = new URL(url).host;
  const found = listProviders().find(
    (p) => p.baseUrl !== null && URL.canParse(p.baseUrl) && new URL(p.baseUrl).host === host,
  );
  return found?.name ?? null;
}

/** The endpoint a path is (`…/chat/completions` → chatComplete), `proxy` for any other. */
function endpointOf(path: string, method: string): string {
  for (const [type, route] of Object.entries(ENDPOINT_PATHS))
    if (route.method === method && path.endsWith(route.path)) return type;
  return 'proxy';
}

const text = (value: unknown, max: number): string | null =>
  typeof value === 'string' && value.length > 0 ? value.slice(0, max) : null;

/** A body as stored when log_bodies is on: JSON text, cut at `capture` bytes as the gateway does. */
function captured(body: unknown, capture: number): string | null {
  if (capture <= 0) return null;
  return Buffer.from(JSON.stringify(body)).subarray(0, capture).toString('utf8');
}

export interface RecordContext {
  principal: Principal;
  workspaceId: string;
  requestId: string;
  now: number;
  /** log_body_max_bytes when log_bodies is on, else 0. */
  capture: number;
}

/**
 * The request_logs row of one record: tokens from `response.body.usage`, the model from the
 * request body (else the response's), the provider from the URL's host, tracing fields from
 * the metadata. `cost` is filled in by the caller, which has the prices.
 */
export function toRequestLog(
  entry: CustomLog,
  ctx: RecordContext,
): { row: RequestLogInsert; provider: string | null; usage: TokenUsage | null } {
  const { path, stored } = SAFE_URL_PATH(entry.request.url);
  const provider = providerOfUrl(entry.request.url);
  const usage = usageFromBody(entry.response.body);
  const metadata = { ...entry.metadata };
  const tracing: Partial<Record<(typeof TRACING_KEYS)[number], string>> = {};
  for (const key of TRACING_KEYS) {
    if (metadata[key] !== undefined) tracing[key] = metadata[key];
    delete metadata[key];
  }
  const id = newTimeOrderedId(ctx.now);
  const status = entry.response.status;
  const raw = entry.response.body.error;
  const error = raw !== null && typeof raw === 'object' ? (raw as { message?: unknown; code?: unknown }) : null;
  const failed = status >= 400;
  return {
    provider,
    usage,
    row: {
      id,
      trace_id: tracing.trace_id ?? id,
      request_id: ctx.requestId,
      organisation_id: ctx.principal.organisationId,
      workspace_id: ctx.workspaceId,
      api_key_id: ctx.principal.keyId,
      provider,
      credential_source: 'external',
      model: text(entry.request.body.model, 256) ?? text(entry.response.body.model, 256),
      requested_model: text(entry.request.body.model, 256),
      endpoint_type: endpointOf(path, entry.request.method),
      method: entry.request.method,
      path: stored,
      status_code: status,
      is_success: failed ? 0 : 1,
      is_stream: entry.request.body.stream === true ? 1 : 0,
      error_code: failed && error ? text(error.code, 128) : null,
      error_message: failed && error ? text(error.message, 1024) : null,
      latency_ms: entry.response.response_time,
      ttfb_ms: null,
      prompt_tokens: usage?.promptTokens ?? null,
      completion_tokens: usage?.completionTokens ?? null,
      cached_tokens: usage?.cachedTokens ?? null,
      total_tokens: usage?.totalTokens ?? null,
      cost: null,
      cost_currency: 'USD',
      cache_status: 'DISABLED',
      metadata: Object.keys(metadata).length > 0 ? JSON.stringify(metadata) : null,
      request_body: captured(entry.request.body, ctx.capture),
      response_body: captured(entry.response.body, ctx.capture),
      created_at: new Date(ctx.now).toISOString(),
      retry_count: 0,
      span_id: tracing.span_id ?? null,
      parent_span_id: tracing.parent_span_id ?? null,
      span_name: tracing.span_name ?? null,
    },
  };
}
