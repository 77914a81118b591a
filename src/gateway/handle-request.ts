import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import { AppError, ERROR_CODES } from '../lib/errors.js';
import { estimateRequest } from '../limits/estimate.js';
import { rateHeaders, RateLimitedError, type Admission, type LimitsService } from '../limits/limits-service.js';
import type { PricingService } from '../pricing/pricing-service.js';
import type { EndpointType } from '../providers/endpoints.js';
import { buildUpstreamTarget, ProviderConfigError, supportsEndpoint, UpstreamPathError } from '../providers/registry.js';
import type { UpstreamTarget } from '../providers/types.js';
import type { RequestLogWriter } from '../telemetry/request-log-writer.js';
import { headersForClient, headersForUpstream } from './forward-headers.js';
import { readGatewayHeaders } from './gateway-headers.js';
import { RequestLogDraft } from './request-log-draft.js';
import { resolveTarget, type CredentialLookup } from './resolve-target.js';
import { createSseRelay } from './sse-relay.js';
import { upstreamFailure, type UpstreamClient } from './upstream-client.js';
import { usageFromBody } from './usage.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body bytes as received, kept so that an unchanged body is forwarded without re-encoding. */
    rawBody?: Buffer;
  }
}

export interface GatewayRoute {
  endpointType: EndpointType;
  /** JSON routes are parsed and validated; raw ones (multipart, pass-through) are streamed as they come. */
  body: 'json' | 'raw';
}

export interface GatewayDeps {
  config: Config;
  clock: Clock;
  upstream: UpstreamClient;
  credentials: CredentialLookup;
  logs: RequestLogWriter;
  pricing: PricingService;
  limits: LimitsService;
  defaultWorkspaceId(organisationId: string): Promise<string>;
}

/** Endpoints whose streams report usage only when asked (`stream_options.include_usage`). */
const USAGE_ON_REQUEST: ReadonlySet<EndpointType> = new Set(['chatComplete', 'complete']);
const MAX_ERROR_BODY = 1024 * 1024;

/**
 * The data-plane pipeline for one request: credentials → upstream call → relay (streamed as it
 * arrives) → one log record, written off the hot path when the response has ended.
 */
export function createGatewayHandler(deps: GatewayDeps) {
  const capture = deps.config.log_bodies ? deps.config.log_body_max_bytes : 0;

  return async function handle(route: GatewayRoute, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const principal = request.principal!;
    const path = request.url.slice('/v1'.length) || '/';
    const workspaceId = principal.workspaceId ?? (await deps.defaultWorkspaceId(principal.organisationId));
    const draft = new RequestLogDraft(principal, workspaceId, route.endpointType, request.method, request.url.split('?')[0] ?? request.url, request.id, deps.clock.now(), performance.now());
    const abort = new AbortController();
    const admission: Admission = { tokenLimits: [], reservation: null, headers: null };
    let upstreamStatus: number | null = null;
    let answered: Buffer | null = null;
    reply.raw.once('close', () => {
      if (answered) readUsage(draft, answered);
      const finished = reply.raw.writableFinished;
      if (!finished) abort.abort();
      const status = finished || reply.statusCode >= 400 ? reply.statusCode : 499;
      if (!finished && draft.errorCode === null) draft.errorCode = 'CLIENT_CLOSED_REQUEST';
      const endedPerf = performance.now();
      const completed = priced(draft, deps.pricing).then(async () => {
        await deps.limits.settle(admission, actualUsage(draft, upstreamStatus));
        return draft.finish(status, endedPerf);
      });
      deps.logs.enqueueWhenReady(completed);
    });

    try {
      const headers = readGatewayHeaders(request.headers);
      draft.traceId = headers.traceId;
      draft.metadata = headers.metadata;
      reply.header('x-service-trace-id', headers.traceId);

      const json = route.body === 'json' ? (request.body as Record<string, unknown>) : null;
      if (json && typeof json.model === 'string') draft.model = json.model;
      draft.isStream = json?.stream === true;
      if (capture > 0 && request.rawBody) draft.requestBody = request.rawBody.subarray(0, capture).toString('utf8');

      const facts = await deps.limits.facts(principal, workspaceId, route.endpointType, headers.metadata);
      Object.assign(admission, await deps.limits.admitRate(principal, facts));
      if (admission.headers) reply.headers(rateHeaders(admission.headers, deps.clock.now()));

      const target = await resolveTarget(headers, principal, workspaceId, deps.credentials);
      draft.provider = target.provider.name;
      draft.credentialSource = target.source;
      if (!supportsEndpoint(target.provider, route.endpointType)) {
        throw new AppError('UNSUPPORTED_ENDPOINT', `Provider ${target.provider.name} does not support ${route.endpointType} (${path.split('?')[0]}).`, { param: 'x-service-provider' });
      }
      reply.header('x-service-provider', target.provider.name);
      admission.reservation = await deps.limits.reserveBudgets(principal, facts, async () =>
        estimateRequest(route.endpointType, json, request.rawBody?.length ?? 0, draft.model ? await deps.pricing.priceOf(target.provider.name, draft.model) : null),
      );

      const upstreamTarget = toUpstreamTarget(target.provider, path, target.context);
      const dropUsageOnlyChunk = draft.isStream && USAGE_ON_REQUEST.has(route.endpointType) && !usageRequested(json);
      const body = json ? jsonBodyFor(request, json, dropUsageOnlyChunk) : (request.body as Readable | undefined) ?? null;
      const outgoing = {
        ...headersForUpstream(request.headers, { keepLength: !json, keepEncoding: !json }),
        ...(json ? { 'content-type': 'application/json' } : {}),
        ...upstreamTarget.headers,
      };

      const res = await deps.upstream.send({ url: upstreamTarget.url, method: request.method, headers: outgoing, body, signal: abort.signal });
      upstreamStatus = res.statusCode;
      draft.markFirstByte(performance.now());

      if (!json) {
        res.body.once('data', () => draft.markFirstByte(performance.now()));
        return reply.code(res.statusCode).headers(headersForClient(res.headers, { keepLength: true })).send(res.body);
      }
      if (res.statusCode >= 400) return sendUpstreamError(reply, draft, res.statusCode, await readLimited(res.body, MAX_ERROR_BODY));

      const contentType = String(res.headers['content-type'] ?? '');
      if (draft.isStream && contentType.includes('text/event-stream')) {
        const relay = createSseRelay({ dropUsageOnlyChunk, captureBytes: capture, onFirstChunk: () => draft.markFirstByte(performance.now()) });
        res.body.on('error', (error) => {
          if (abort.signal.aborted) return;
          const failure = upstreamFailure(error);
          draft.errorCode = 'UPSTREAM_STREAM_ERROR';
          draft.errorMessage = failure.message;
          relay.fail({ message: `The provider's stream failed: ${failure.message}`, type: 'api_error', code: 'UPSTREAM_STREAM_ERROR' });
        });
        relay.stream.once('end', () => {
          draft.usage = relay.result.usage;
          if (capture > 0) draft.responseBody = relay.result.captured;
        });
        res.body.pipe(relay.stream);
        return reply.code(res.statusCode).headers(headersForClient(res.headers, { keepLength: false })).send(relay.stream);
      }

      const bytes = Buffer.from(await res.body.arrayBuffer());
      // Usage and model are for the log and the limits: read once the reply is on its way.
      answered = bytes;
      if (capture > 0) draft.responseBody = bytes.subarray(0, capture).toString('utf8');
      return reply.code(res.statusCode).headers(headersForClient(res.headers, { keepLength: false })).send(bytes);
    } catch (error) {
      if (error instanceof RateLimitedError) reply.headers(error.headers);
      const failure = error instanceof AppError ? error : upstreamFailure(error);
      draft.errorCode = failure.code;
      draft.errorMessage = failure.message;
      throw failure;
    }
  };
}

/**
 * What a finished request used, for its limits: the provider's usage when it reported one;
 * the reservation as it stands when the provider answered but the usage never arrived; nothing
 * when no provider answered successfully.
 */
function actualUsage(draft: RequestLogDraft, upstreamStatus: number | null) {
  if (draft.usage) return { cost: draft.cost, tokens: draft.usage.totalTokens };
  if (upstreamStatus !== null && upstreamStatus < 400 && draft.errorCode !== null) return 'as-reserved' as const;
  return null;
}

/** Prices the request from its usage; pricing answers from memory for known models. */
async function priced(draft: RequestLogDraft, pricing: PricingService): Promise<void> {
  if (draft.usage === null) return;
  try {
    draft.cost = await pricing.costOf(draft.provider, draft.model, draft.usage);
  } catch {
    draft.cost = null; // unknown, never zero
  }
}

function toUpstreamTarget(provider: Parameters<typeof buildUpstreamTarget>[0], path: string, context: Parameters<typeof buildUpstreamTarget>[2]): UpstreamTarget {
  try {
    return buildUpstreamTarget(provider, path, context);
  } catch (error) {
    if (error instanceof ProviderConfigError) throw new AppError('PROVIDER_CONFIG', error.message, { param: 'x-service-provider' });
    if (error instanceof UpstreamPathError) throw new AppError('INVALID_REQUEST', error.message, { param: 'path' });
    throw error;
  }
}

function usageRequested(json: Record<string, unknown> | null): boolean {
  const options = json?.stream_options as { include_usage?: unknown } | undefined;
  return options?.include_usage === true;
}

const INCLUDE_USAGE = Buffer.from(',"stream_options":{"include_usage":true}');

/**
 * The unchanged bytes when possible. To ask a stream for its usage, the option is spliced in
 * before the body's closing brace; the body is re-encoded only when it already has options.
 */
function jsonBodyFor(request: FastifyRequest, json: Record<string, unknown>, askForUsage: boolean): Buffer {
  const raw = request.rawBody;
  if (!askForUsage && raw) return raw;
  if (raw && json.stream_options === undefined) {
    const end = raw.lastIndexOf(0x7d);
    if (end > 0) return Buffer.concat([raw.subarray(0, end), INCLUDE_USAGE, raw.subarray(end)]);
  }
  const streamOptions = { ...((json.stream_options as Record<string, unknown> | undefined) ?? {}), include_usage: true };
  return Buffer.from(JSON.stringify(askForUsage ? { ...json, stream_options: streamOptions } : json));
}

function readUsage(draft: RequestLogDraft, bytes: Buffer): void {
  const parsed = parseJson(bytes);
  draft.usage = usageFromBody(parsed);
  if (parsed && typeof (parsed as { model?: unknown }).model === 'string') draft.model = (parsed as { model: string }).model;
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
}

async function readLimited(body: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    if (size + buffer.length > limit) {
      chunks.push(buffer.subarray(0, limit - size));
      body.destroy();
      break;
    }
    chunks.push(buffer);
    size += buffer.length;
  }
  return Buffer.concat(chunks);
}

/**
 * A provider's 4xx/5xx on a unified route: the provider's status, in our error body, keeping
 * the provider's message (and its type and code when it gave them in the OpenAI shape).
 */
function sendUpstreamError(reply: FastifyReply, draft: RequestLogDraft, status: number, bytes: Buffer) {
  const parsed = parseJson(bytes) as { error?: unknown; message?: unknown } | null;
  const inner = parsed && typeof parsed.error === 'object' && parsed.error !== null ? (parsed.error as Record<string, unknown>) : null;
  const message =
    (typeof inner?.message === 'string' && inner.message) ||
    (typeof parsed?.error === 'string' && parsed.error) ||
    (typeof parsed?.message === 'string' && parsed.message) ||
    bytes.toString('utf8').slice(0, 2000) ||
    `The provider answered ${status}.`;
  const body = {
    error: {
      message,
      type: typeof inner?.type === 'string' ? inner.type : ERROR_CODES.UPSTREAM_ERROR.type,
      param: typeof inner?.param === 'string' ? inner.param : null,
      code: typeof inner?.code === 'string' ? inner.code : 'UPSTREAM_ERROR',
    },
  };
  draft.errorCode = 'UPSTREAM_ERROR';
  draft.errorMessage = message.slice(0, 2000);
  return reply.code(status).header('x-service-upstream-status', String(status)).type('application/json; charset=utf-8').send(body);
}
