import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { AppError, codeToStatus } from '../lib/errors.js';
import type { AdapterContext, TranslatedEndpoint, WireAdapter } from '../providers/adapters/types.js';
import { entraAuthHeaders, readEntraInputs } from '../providers/azure-entra.js';
import {
  adapterFor,
  buildUpstreamTarget,
  ProviderConfigError,
  supportsEndpoint,
  UpstreamPathError,
} from '../providers/registry.js';
import { headersForUpstream } from './forward-headers.js';
import type { GatewayHeaders } from './gateway-headers.js';
import type { GatewayRequest, GatewayRoute } from './exchange.js';
import type { ResolvedTarget } from './resolve-target.js';
import { retryAfterMs } from './routing/backoff.js';
import type { AttemptOutcome, LeafSettings } from './routing/router.js';
import { upstreamFailure, type UpstreamClient } from './upstream-client.js';

/** Endpoints whose streams report usage only when asked (`stream_options.include_usage`). */
const USAGE_ON_REQUEST: ReadonlySet<string> = new Set(['chatComplete', 'complete']);
const TRANSLATABLE: ReadonlySet<string> = new Set(['chatComplete', 'complete', 'embed', 'rerank']);
const MAX_ERROR_BODY = 1024 * 1024;
const INCLUDE_USAGE = Buffer.from(',"stream_options":{"include_usage":true}');

/** A provider's answer to one attempt, ready to relay (or to drop when the router moves on). */
export interface UpstreamAnswer {
  res: Dispatcher.ResponseData;
  target: ResolvedTarget;
  /** Set when the provider speaks its own wire format: its answer is translated on the way back. */
  adapter: WireAdapter | undefined;
  /** The JSON body as sent (after override_params); null on raw routes. */
  body: Record<string, unknown> | null;
  isStream: boolean;
  /** Whether the client did not ask for the stream's usage chunk (the gateway did, for the log). */
  dropUsageOnlyChunk: boolean;
  /**
   * The whole body of an answer that is not a stream (error bodies capped at 1 MiB); also of a
   * stream request the provider answered with a plain body. Null while a stream is to be relayed.
   */
  bytes: Buffer | null;
}

export interface AttemptRequest {
  route: GatewayRoute;
  request: GatewayRequest;
  /** The path after /v1, with its query. */
  path: string;
  json: Record<string, unknown> | null;
  headers: GatewayHeaders;
  target: ResolvedTarget;
  settings: LeafSettings;
  /** Aborts the attempt when the client goes away; the caller keeps the latest one. */
  controller: AbortController;
}

export interface CallDeps {
  upstream: UpstreamClient;
  now: () => number;
}

/**
 * One attempt at one target: builds the provider's request (as it is for the OpenAI format,
 * through the adapter for the others), sends it, and waits until the answer can be judged: a
 * JSON answer is read whole, a stream until its first bytes. A `request_timeout` covers exactly
 * that; once a stream has begun, it no longer applies.
 */
export async function callTarget(deps: CallDeps, req: AttemptRequest): Promise<AttemptOutcome<UpstreamAnswer>> {
  const { route, target } = req;
  if (!supportsEndpoint(target.provider, route.endpointType)) {
    throw new AppError(
      'UNSUPPORTED_ENDPOINT',
      `Provider ${target.provider.name} does not support ${route.endpointType} (${req.path.split('?')[0]}).`,
      { param: 'x-service-provider' },
    );
  }
  const adapter = adapterFor(target.provider);
  const body = req.json && req.settings.overrideParams ? { ...req.json, ...req.settings.overrideParams } : req.json;
  const isStream = body?.stream === true;
  const dropUsageOnlyChunk = isStream && !adapter && USAGE_ON_REQUEST.has(route.endpointType) && !usageRequested(body);
  let outgoing: Awaited<ReturnType<typeof buildProviderRequest>>;
  try {
    outgoing = await buildProviderRequest(deps, req, adapter, body, dropUsageOnlyChunk);
  } catch (error) {
    // A bad request or setting is the caller's to fix; a failed token exchange is the provider failing.
    if (!(error instanceof AppError) || codeToStatus(error.code) < 500) throw error;
    return { ok: false, error };
  }

  const timeoutMs = req.settings.requestTimeoutMs;
  let timedOut = false;
  const timer =
    timeoutMs === null
      ? null
      : setTimeout(() => {
          timedOut = true;
          req.controller.abort();
        }, timeoutMs);
  const failed = (error: unknown): AttemptOutcome<UpstreamAnswer> => ({
    ok: false,
    error: timedOut
      ? new AppError('UPSTREAM_TIMEOUT', `The provider did not answer within request_timeout (${timeoutMs} ms).`)
      : upstreamFailure(error),
  });

  try {
    const res = await deps.upstream.send({ ...outgoing, signal: req.controller.signal });
    const answer: UpstreamAnswer = { res, target, adapter, body, isStream, dropUsageOnlyChunk, bytes: null };
    if (route.body === 'json') {
      if (res.statusCode >= 400) answer.bytes = await readLimited(res.body, MAX_ERROR_BODY);
      else if (isStream && streamsBack(String(res.headers['content-type'] ?? ''), adapter)) await firstBytes(res.body);
      // A stream asked for and a whole JSON answer given: read it like one, relayed as the provider sent it.
      else answer.bytes = Buffer.from(await res.body.arrayBuffer());
    }
    return {
      ok: true,
      status: res.statusCode,
      response: answer,
      retryAfterMs: res.statusCode >= 400 ? retryAfterMs(res.headers, deps.now()) : null,
    };
  } catch (error) {
    return failed(error);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/**
 * Whether a provider asked for a stream answers with one: OpenAI-format providers with SSE;
 * adapted ones with anything but plain JSON (Bedrock's event stream is not SSE).
 */
function streamsBack(contentType: string | undefined, adapter: WireAdapter | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return adapter ? type !== 'application/json' : type === 'text/event-stream';
}

/** Drops an answer the router will not use. */
export function discardAnswer(answer: UpstreamAnswer): void {
  if (!answer.res.body.destroyed) answer.res.body.destroy();
}

async function buildProviderRequest(
  deps: CallDeps,
  req: AttemptRequest,
  adapter: WireAdapter | undefined,
  body: Record<string, unknown> | null,
  askForUsage: boolean,
) {
  const { request, route, target } = req;
  if (adapter) {
    const ctx: AdapterContext = {
      provider: target.provider,
      target: target.context,
      options: { anthropicBeta: req.settings.anthropicBeta, azureEntraScope: req.settings.azureEntraScope },
      headers: request.headers,
      dispatcher: deps.upstream.dispatcher,
      now: deps.now,
    };
    if (
      body &&
      TRANSLATABLE.has(route.endpointType) &&
      adapter.endpoints.has(route.endpointType as TranslatedEndpoint)
    ) {
      const built = await adapter.buildRequest(route.endpointType as TranslatedEndpoint, body, ctx);
      return {
        url: built.url,
        method: built.method,
        headers: built.headers,
        body: typeof built.body === 'string' ? Buffer.from(built.body) : built.body,
      };
    }
    const through = adapter.passThrough ? await adapter.passThrough(req.path, request.method, ctx) : null;
    if (!through)
      throw new AppError(
        'UNSUPPORTED_ENDPOINT',
        `Provider ${target.provider.name} offers no pass-through for ${req.path.split('?')[0]}.`,
        { param: 'x-service-provider' },
      );
    return {
      url: through.url,
      method: request.method,
      headers: {
        ...headersForUpstream(request.headers, { keepLength: !body, keepEncoding: !body }),
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...through.headers,
      },
      body: body ? jsonBody(request, body, req.json, false) : ((request.body as Readable | undefined) ?? null),
    };
  }
  const upstream = toUpstreamTarget(target, req.path);
  const auth =
    target.provider.name === 'azure-openai' ? await azureAuth(deps, req, upstream.headers) : upstream.headers;
  return {
    url: upstream.url,
    method: request.method,
    headers: {
      ...headersForUpstream(request.headers, { keepLength: !body, keepEncoding: !body }),
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...auth,
    },
    body: body ? jsonBody(request, body, req.json, askForUsage) : ((request.body as Readable | undefined) ?? null),
  };
}

/** Azure OpenAI with Microsoft Entra ID inputs: a bearer token instead of the api-key header. */
async function azureAuth(
  deps: CallDeps,
  req: AttemptRequest,
  keyHeaders: Record<string, string>,
): Promise<Record<string, string>> {
  const inputs = readEntraInputs(req.target.context.configurations, req.request.headers, req.settings.azureEntraScope);
  const entra = await entraAuthHeaders(inputs, { dispatcher: deps.upstream.dispatcher, now: deps.now });
  if (!entra) return keyHeaders;
  const { 'api-key': _apiKey, ...rest } = keyHeaders;
  return { ...rest, ...entra };
}

function toUpstreamTarget(target: ResolvedTarget, path: string) {
  try {
    return buildUpstreamTarget(target.provider, path, target.context);
  } catch (error) {
    if (error instanceof ProviderConfigError)
      throw new AppError('PROVIDER_CONFIG', error.message, { param: 'x-service-provider' });
    if (error instanceof UpstreamPathError) throw new AppError('INVALID_REQUEST', error.message, { param: 'path' });
    throw error;
  }
}

function usageRequested(json: Record<string, unknown> | null): boolean {
  const options = json?.stream_options as { include_usage?: unknown } | undefined;
  return options?.include_usage === true;
}

/**
 * The unchanged bytes when possible. To ask a stream for its usage, the option is spliced in
 * before the body's closing brace; the body is re-encoded only when it changed otherwise
 * (override_params) or already has stream options.
 */
function jsonBody(
  request: GatewayRequest,
  body: Record<string, unknown>,
  original: Record<string, unknown> | null,
  askForUsage: boolean,
): Buffer {
  const raw = body === original ? request.rawBody : undefined;
  if (!askForUsage && raw) return raw;
  if (raw && body.stream_options === undefined) {
    const end = raw.lastIndexOf(0x7d);
    if (end > 0) return Buffer.concat([raw.subarray(0, end), INCLUDE_USAGE, raw.subarray(end)]);
  }
  const streamOptions = {
    ...((body.stream_options as Record<string, unknown> | undefined) ?? {}),
    include_usage: true,
  };
  return Buffer.from(JSON.stringify(askForUsage ? { ...body, stream_options: streamOptions } : body));
}

/** Resolves once the body has bytes to read (or has ended); rejects if it fails first. Reads nothing. */
function firstBytes(body: Readable): Promise<void> {
  if (body.readableLength > 0 || body.readableEnded) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      body.off('readable', onReadable);
      body.off('error', onError);
      body.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onReadable = () => done();
    const onError = (error: Error) => done(error);
    const onClose = () => done(body.readableEnded ? undefined : new Error('the stream closed before its first byte'));
    body.on('readable', onReadable);
    body.on('error', onError);
    body.on('close', onClose);
  });
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
