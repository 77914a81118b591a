import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
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
import { answerObject, isRedirect, redirectRefused, unreadableAnswer } from './answer-checks.js';
import { headersForUpstream } from './forward-headers.js';
import type { GatewayHeaders } from './gateway-headers.js';
import type { GatewayRequest, GatewayRoute } from './exchange.js';
import type { ResolvedTarget } from './resolve-target.js';
import { retryAfterMs } from './routing/backoff.js';
import type { AttemptOutcome, LeafSettings } from './routing/router.js';
import { callAborted, type ReadPlan, type UpstreamCall, type UpstreamResponse } from './upstream-call.js';
import { upstreamFailure, type UpstreamClient } from './upstream-client.js';

/** Endpoints whose streams report usage only when asked (`stream_options.include_usage`). */
const USAGE_ON_REQUEST: ReadonlySet<string> = new Set(['chatComplete', 'complete']);
const TRANSLATABLE: ReadonlySet<string> = new Set(['chatComplete', 'complete', 'embed', 'rerank']);
/** An error answer is read whole, up to 1 MiB; a successful JSON answer whole. */
const ERROR_BODY: ReadPlan = { keep: 1024 * 1024 };
const WHOLE_BODY: ReadPlan = { keep: Infinity };
const INCLUDE_USAGE = Buffer.from(',"stream_options":{"include_usage":true}');

/** A provider's answer to one attempt, ready to relay (or to drop when the router moves on). */
export interface UpstreamAnswer {
  /**
   * The provider's answer: on JSON routes, read whole (`bytes`, error bodies capped at 1 MiB)
   * unless it is the stream that was asked for (`body`, relayed as it comes); on raw routes, `body`.
   */
  res: UpstreamResponse;
  target: ResolvedTarget;
  /** Set when the provider speaks its own wire format: its answer is translated on the way back. */
  adapter: WireAdapter | undefined;
  /** The JSON body as sent (after override_params); null on raw routes. */
  body: Record<string, unknown> | null;
  isStream: boolean;
  /** Whether the client did not ask for the stream's usage chunk (the gateway did, for the log). */
  dropUsageOnlyChunk: boolean;
  /** A successful answer read whole on an endpoint that answers a JSON object: that object, parsed once. */
  json?: Record<string, unknown>;
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
  /** The client's side: no call starts once it has gone, and the running one is stopped when it goes. */
  link: ClientLink;
}

/** Set by the caller when the client goes away; holds the latest attempt's call, to stop it then. */
export interface ClientLink {
  gone: boolean;
  call: UpstreamCall | null;
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
  let outgoing: OutgoingRequest;
  try {
    // Most calls need nothing awaited to build: an OpenAI-format provider with its key.
    outgoing =
      adapter || target.provider.name === 'azure-openai'
        ? await buildProviderRequest(deps, req, adapter, body, dropUsageOnlyChunk)
        : openAIRequest(req, toUpstreamTarget(target, req.path), body, dropUsageOnlyChunk);
  } catch (error) {
    // A bad request or setting is the caller's to fix; a failed token exchange is the provider failing.
    if (!(error instanceof AppError) || codeToStatus(error.code) < 500) throw error;
    return { ok: false, error };
  }

  if (req.link.gone) return { ok: false, error: upstreamFailure(callAborted()) };
  const call = deps.upstream.call(outgoing, (status, headers) => readPlan(route, status, headers, isStream, adapter));
  req.link.call = call;
  const timeoutMs = req.settings.requestTimeoutMs;
  let timedOut = false;
  const timer =
    timeoutMs === null
      ? null
      : setTimeout(() => {
          timedOut = true;
          call.abort(callAborted());
        }, timeoutMs);
  try {
    const res = await call.answer;
    if (isRedirect(res.statusCode)) {
      res.body?.destroy();
      return { ok: false, error: redirectRefused(res.statusCode, res.headers.location, outgoing.url) };
    }
    if (res.endedEmpty && res.statusCode < 300) {
      res.body?.destroy();
      return { ok: false, error: unreadableAnswer(target.provider.name, res, 'the stream ended before any event') };
    }
    const json = answerObject(route.endpointType, res, target.provider.name, adapter);
    if (json instanceof AppError) return { ok: false, error: json };
    return {
      ok: true,
      status: res.statusCode,
      response: { res, target, adapter, body, isStream, dropUsageOnlyChunk, json },
      retryAfterMs: res.statusCode >= 400 ? retryAfterMs(res.headers, deps.now()) : null,
    };
  } catch (error) {
    return {
      ok: false,
      error: timedOut
        ? new AppError('UPSTREAM_TIMEOUT', `The provider did not answer within request_timeout (${timeoutMs} ms).`)
        : upstreamFailure(error),
    };
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/**
 * How much of an answer to read before it is judged: on JSON routes all of it, except a stream
 * that was asked for (until its first bytes); on raw routes nothing (it streams through).
 */
function readPlan(
  route: GatewayRoute,
  status: number,
  headers: IncomingHttpHeaders,
  isStream: boolean,
  adapter: WireAdapter | undefined,
): ReadPlan {
  if (route.body !== 'json') return 'headers';
  if (status >= 400) return ERROR_BODY;
  if (isStream && streamsBack(String(headers['content-type'] ?? ''), adapter)) return 'first-bytes';
  // A stream asked for and a whole JSON answer given: read it like one, relayed as the provider sent it.
  return WHOLE_BODY;
}

/**
 * Whether a provider asked for a stream answers with one: OpenAI-format providers with SSE;
 * adapted ones with anything but plain JSON (Bedrock's event stream is not SSE).
 */
function streamsBack(contentType: string | undefined, adapter: WireAdapter | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return adapter ? type !== 'application/json' : type === 'text/event-stream';
}

/** Drops an answer the router will not use (a body read whole needs nothing). */
export function discardAnswer(answer: UpstreamAnswer): void {
  const body = answer.res.body;
  if (body && !body.destroyed) body.destroy();
}

type OutgoingRequest = Parameters<UpstreamClient['call']>[0];

/** The request for a provider with its own wire format (through its adapter), or for Azure OpenAI (whose auth may need a token). */
async function buildProviderRequest(
  deps: CallDeps,
  req: AttemptRequest,
  adapter: WireAdapter | undefined,
  body: Record<string, unknown> | null,
  askForUsage: boolean,
): Promise<OutgoingRequest> {
  const { request, route, target } = req;
  if (!adapter) {
    const upstream = toUpstreamTarget(target, req.path);
    return openAIRequest(
      req,
      { url: upstream.url, headers: await azureAuth(deps, req, upstream.headers) },
      body,
      askForUsage,
    );
  }
  const ctx: AdapterContext = {
    provider: target.provider,
    target: target.context,
    options: { anthropicBeta: req.settings.anthropicBeta, azureEntraScope: req.settings.azureEntraScope },
    headers: request.headers,
    dispatcher: deps.upstream.dispatcher,
    now: deps.now,
  };
  if (body && TRANSLATABLE.has(route.endpointType) && adapter.endpoints.has(route.endpointType as TranslatedEndpoint)) {
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
  return openAIRequest(req, through, body, false);
}

/**
 * The client's request as an OpenAI-format provider gets it: at the provider's URL, with the
 * client's headers (less its credentials and ours) and the provider's auth, the body as sent.
 */
function openAIRequest(
  req: AttemptRequest,
  upstream: { url: string; headers: Record<string, string> },
  body: Record<string, unknown> | null,
  askForUsage: boolean,
): OutgoingRequest {
  const { request } = req;
  const headers = headersForUpstream(request.headers, { keepLength: !body, keepEncoding: !body });
  if (body) headers['content-type'] = 'application/json';
  Object.assign(headers, upstream.headers);
  return {
    url: upstream.url,
    method: request.method,
    headers,
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
