import { PassThrough, type Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { createCacheCapture, DEFAULT_CACHE_LIMITS, keptHeaders, type CacheLookup } from '../cache/index.js';
import { ERROR_CODES } from '../lib/errors.js';
import type { StreamContext, TranslatedEndpoint, WireAdapter } from '../providers/adapters/types.js';
import { unreadableAnswer } from './answer-checks.js';
import type { ClientLink, UpstreamAnswer } from './call-target.js';
import type { GatewayReply } from './exchange.js';
import { headersForClient, providerSignalHeaders } from './forward-headers.js';
import type { RequestLogDraft } from './request-log-draft.js';
import { createSseReader } from './sse-reader.js';
import { relaySse } from './sse-relay.js';
import { watchSilence } from './stream-silence.js';
import { upstreamFailure } from './upstream-client.js';
import { usageFromBody } from '../providers/usage.js';

export interface RelayOptions {
  /** Bytes of each body to keep for the log (0: none). */
  capture: number;
  /** Once the client has gone (`gone`), a failing upstream stream is not reported. */
  link: ClientLink;
  /** After a cache MISS or REFRESH: where a successful answer is kept. */
  cache: CacheLookup | null;
  /** The longest a provider's stream may go without an event (`upstream_body_timeout_ms`). */
  eventTimeoutMs: number;
}

/** The stream to send: through a capture that hands the whole stream to the cache when it ends well. */
function cachedStream(
  stream: Readable,
  status: number,
  headers: Record<string, string | string[]>,
  draft: RequestLogDraft,
  cache: CacheLookup | null,
): Readable {
  if (!cache) return stream;
  const capture = createCacheCapture({
    maxBytes: DEFAULT_CACHE_LIMITS.maxBodyBytes,
    onComplete: (body) => {
      if (body && draft.errorCode === null)
        cache.store({ status, headers: keptHeaders(headers), body, stream: true, provider: draft.provider });
    },
  });
  return stream.pipe(capture);
}

/**
 * Sends the chosen answer to the client: a pass-through body as it came, a JSON answer whole,
 * a stream event by event. Answers of providers with their own wire format are translated on
 * the way. Returns the bytes of a plain JSON answer in the OpenAI format, whose usage the
 * caller reads once the reply is on its way.
 */
export function relayAnswer(
  reply: GatewayReply,
  draft: RequestLogDraft,
  answer: UpstreamAnswer,
  options: RelayOptions,
): { sent: unknown; plainJson: Buffer | null } {
  const { res } = answer;
  if (answer.body === null && res.body) {
    // Pass-through: the provider's bytes, status and headers, unchanged.
    res.body.once('data', () => draft.markFirstByte(performance.now()));
    const contentType = String(res.headers['content-type'] ?? '');
    // The body was not parsed: the answer tells whether the client asked for a stream (native /v1/messages, transcriptions).
    if (contentType.includes('text/event-stream')) draft.isStream = true;
    const native =
      answer.adapter?.nativeChatPath && res.statusCode < 300 && draft.path === `/v1${answer.adapter.nativeChatPath}`;
    const withUsage = !answer.adapter && res.statusCode < 300 && USAGE_ON_PASS_THROUGH.has(draft.endpointType);
    const body = native
      ? withNativeUsage(res.body, answer.adapter!, draft, contentType)
      : withUsage
        ? withOpenAIUsage(res.body, draft, contentType)
        : res.body;
    return {
      sent: reply
        .code(res.statusCode)
        .headers(headersForClient(res.headers, { keepLength: true }))
        .send(body),
      plainJson: null,
    };
  }
  if (answer.adapter) return { sent: relayTranslated(reply, draft, answer, options), plainJson: null };
  if (res.statusCode >= 400) return { sent: sendUpstreamError(reply, draft, answer), plainJson: null };

  if (answer.isStream && res.body) {
    const upstream = res.body;
    const relay = relaySse(upstream, {
      dropUsageOnlyChunk: answer.dropUsageOnlyChunk,
      captureBytes: options.capture,
      onFirstChunk: () => draft.markFirstByte(performance.now()),
      eventTimeoutMs: options.eventTimeoutMs,
      response: reply.raw,
    });
    upstream.on('error', (error) => {
      if (options.link.gone) return;
      const failure = upstreamFailure(error);
      draft.errorCode = 'UPSTREAM_STREAM_ERROR';
      draft.errorMessage = failure.message;
      relay.fail({
        message: `The provider's stream failed: ${failure.message}`,
        type: 'api_error',
        code: 'UPSTREAM_STREAM_ERROR',
      });
    });
    relay.stream.once('end', () => {
      draft.usage = relay.result.usage;
      if (relay.result.model) draft.model = relay.result.model;
      if (options.capture > 0) draft.responseBody = relay.result.captured;
    });
    const headers = headersForClient(res.headers, { keepLength: false });
    return {
      sent: reply
        .code(res.statusCode)
        .headers(headers)
        .send(cachedStream(relay.stream, res.statusCode, headers, draft, options.cache)),
      plainJson: null,
    };
  }

  // A whole answer; also when a stream was asked for and the provider sent one body instead:
  // relayed as sent (status, type, bytes), logged with its usage, not cached as a stream.
  const bytes = res.bytes ?? Buffer.alloc(0);
  if (options.capture > 0) draft.responseBody = bytes.subarray(0, options.capture).toString('utf8');
  const headers = headersForClient(res.headers, { keepLength: false });
  if (!answer.isStream)
    options.cache?.store({
      status: res.statusCode,
      headers: keptHeaders(headers),
      body: bytes,
      stream: false,
      provider: draft.provider,
    });
  return { sent: reply.code(res.statusCode).headers(headers).send(bytes), plainJson: bytes };
}

/** Pass-through endpoints whose OpenAI answers report usage (multipart uploads: no JSON route reads them). */
const USAGE_ON_PASS_THROUGH: ReadonlySet<string> = new Set(['createTranscription', 'createTranslation', 'imageEdit']);

/**
 * An OpenAI answer passed through untouched, its usage read on the way: a JSON body
 * (`usage` with tokens, or `seconds` for transcriptions billed by duration) or a stream's
 * events (`transcript.text.done` carries the usage of a streamed transcription).
 */
function withOpenAIUsage(body: Readable, draft: RequestLogDraft, contentType: string): Readable {
  if (contentType.includes('text/event-stream')) {
    // A side reader: what it would forward is not used.
    const reader = createSseReader({ dropUsageOnlyChunk: false, captureBytes: 0 });
    const out = relayedThrough(body, draft);
    body.on('data', (chunk: Buffer) => reader.read(chunk));
    body.once('end', () => {
      reader.end();
      draft.usage = reader.result.usage ?? draft.usage;
    });
    return out;
  }
  if (!contentType.includes('json')) return body;
  return tapJson(body, draft, (parsed) => {
    draft.usage = usageFromBody(parsed) ?? draft.usage;
  });
}

/** The body as it comes, with `onJson` called on its parsed JSON once it has ended (up to MAX_NATIVE_JSON). */
function tapJson(body: Readable, draft: RequestLogDraft, onJson: (parsed: unknown) => void): Readable {
  const out = relayedThrough(body, draft);
  const chunks: Buffer[] = [];
  let size = 0;
  body.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_NATIVE_JSON) chunks.push(chunk);
  });
  body.once('end', () => {
    if (size > MAX_NATIVE_JSON) return;
    const parsed = parseJson(Buffer.concat(chunks));
    if (parsed !== null) onJson(parsed);
  });
  return out;
}

const MAX_NATIVE_JSON = 4 * 1024 * 1024;

/**
 * A pass-through body through a stream of its own (which its usage is read beside). `pipe` does
 * not forward a failure: the provider's body failing destroys the stream sent with it, so the
 * client's answer is cut as a plain pass-through's is (rather than left open), and logged as failed.
 */
function relayedThrough(body: Readable, draft: RequestLogDraft): PassThrough {
  const out = new PassThrough();
  body.once('error', (error) => {
    const failure = upstreamFailure(error);
    if (draft.errorCode === null) {
      draft.errorCode = 'UPSTREAM_STREAM_ERROR';
      draft.errorMessage = failure.message;
    }
    out.destroy(failure);
  });
  return body.pipe(out);
}

/**
 * A provider's own chat answer, passed through untouched, with its usage and model read on the
 * way (through the adapter's own chat translation) for the log, the cost and the budgets.
 */
function withNativeUsage(body: Readable, adapter: WireAdapter, draft: RequestLogDraft, contentType: string): Readable {
  const context: StreamContext = { model: null, includeUsage: true, id: 'native', created: 0 };
  if (contentType.includes('text/event-stream')) {
    const out = relayedThrough(body, draft);
    const translator = adapter.createStreamTranslator('chatComplete', context);
    let model: string | null = null;
    let readable = true; // a stream the translation cannot read is still relayed; only its usage is lost
    body.on('data', (chunk: Buffer) => {
      if (!readable) return;
      try {
        for (const event of translator.push(chunk)) model ??= /"model":"([^"]+)"/.exec(event)?.[1] ?? null;
      } catch {
        readable = false;
      }
    });
    body.once('end', () => {
      if (!readable) return;
      try {
        translator.end();
      } catch {
        return;
      }
      draft.usage = translator.usage;
      if (model) draft.model = model;
    });
    return out;
  }
  return tapJson(body, draft, (parsed) => {
    try {
      const translated = adapter.toOpenAIResponse('chatComplete', parsed, context);
      draft.usage = translated.usage;
      if (typeof translated.body.model === 'string') draft.model = translated.body.model;
    } catch {
      // not a chat answer after all (the path matched, the body did not): no usage
    }
  });
}

const SERVED_MODEL = /"model":"([^"\\]{1,256})"/;
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** An answer of a provider with its own wire format, in the OpenAI shape. */
function relayTranslated(
  reply: GatewayReply,
  draft: RequestLogDraft,
  answer: UpstreamAnswer,
  options: RelayOptions,
): unknown {
  const adapter = answer.adapter!;
  const endpoint = draft.endpointType as TranslatedEndpoint;
  const { res } = answer;
  if (res.statusCode >= 400) {
    const error = adapter.toOpenAIError(res.statusCode, res.bytes ?? Buffer.alloc(0), res.headers);
    draft.errorCode = 'UPSTREAM_ERROR';
    draft.errorMessage = error.message.slice(0, 2000);
    const body = {
      error: {
        message: error.message,
        type: error.type ?? ERROR_CODES.UPSTREAM_ERROR.type,
        param: null,
        code: error.code ?? 'UPSTREAM_ERROR',
      },
    };
    return reply
      .code(error.status)
      .headers(providerSignalHeaders(res.headers))
      .header('x-service-upstream-status', String(res.statusCode))
      .type('application/json; charset=utf-8')
      .send(body);
  }
  const signals = providerSignalHeaders(res.headers);
  const context: StreamContext = {
    model: typeof answer.body?.model === 'string' ? answer.body.model : null,
    includeUsage: (answer.body?.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
    id: `chatcmpl-${draft.id}`,
    created: Math.floor(draft.startedAt / 1000),
    request: answer.body,
  };
  if (answer.isStream && res.body) {
    const upstream = res.body;
    const translator = adapter.createStreamTranslator(endpoint, context);
    const out = new PassThrough();
    let captured = '';
    let served: string | null = null;
    /** False when the client's side is full: the provider is then paused until it drains. */
    const write = (events: string[]): boolean => {
      let roomLeft = true;
      for (const event of events) {
        draft.markFirstByte(performance.now());
        served ??= SERVED_MODEL.exec(event)?.[1] ?? null;
        if (captured.length < options.capture) captured += event.slice(0, options.capture - captured.length);
        roomLeft = out.write(event) && roomLeft;
      }
      return roomLeft;
    };
    const finish = () => {
      draft.usage = translator.usage;
      if (served) draft.model = served;
      if (translator.error && draft.errorCode === null) {
        draft.errorCode = 'UPSTREAM_STREAM_ERROR';
        draft.errorMessage = translator.error.message.slice(0, 2000);
      }
      if (options.capture > 0) draft.responseBody = captured;
    };
    // An event is what the translation yields: a provider's pings alone keep no stream alive.
    const silence = watchSilence(upstream, options.eventTimeoutMs);
    upstream.on('data', (chunk: Buffer) => {
      const events = translator.push(chunk);
      if (events.length > 0) silence.event();
      if (write(events)) return;
      // A slow client: read no further ahead of it than the stream's own buffers.
      upstream.pause();
      out.once('drain', () => upstream.resume());
    });
    upstream.once('end', () => {
      write(translator.end());
      finish();
      out.end();
    });
    upstream.once('error', (error) => {
      if (options.link.gone) return;
      const failure = upstreamFailure(error);
      draft.errorCode = 'UPSTREAM_STREAM_ERROR';
      draft.errorMessage = failure.message;
      finish();
      out.end(
        `data: ${JSON.stringify({ error: { message: `The provider's stream failed: ${failure.message}`, type: 'api_error', param: null, code: 'UPSTREAM_STREAM_ERROR' } })}\n\n`,
      );
    });
    upstream.resume();
    return reply
      .code(200)
      .headers(signals)
      .headers(SSE_HEADERS)
      .send(cachedStream(out, 200, SSE_HEADERS, draft, options.cache));
  }
  const translated = translatedAnswer(adapter, endpoint, answer, context);
  if (endpoint === 'embed' && answer.body?.encoding_format === 'base64') embeddingsAsBase64(translated.body);
  draft.usage = translated.usage;
  if (typeof translated.body.model === 'string') draft.model = translated.body.model;
  const bytes = Buffer.from(JSON.stringify(translated.body));
  if (options.capture > 0) draft.responseBody = bytes.subarray(0, options.capture).toString('utf8');
  // A stream request answered with one JSON body is answered the same way, and not cached as a stream.
  if (!answer.isStream)
    options.cache?.store({
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: bytes,
      stream: false,
      provider: draft.provider,
    });
  return reply.code(200).headers(signals).type('application/json; charset=utf-8').send(bytes);
}

/** A provider's whole answer in the OpenAI shape; one the adapter cannot translate is the provider's failure. */
function translatedAnswer(
  adapter: WireAdapter,
  endpoint: TranslatedEndpoint,
  answer: UpstreamAnswer,
  context: StreamContext,
) {
  try {
    return adapter.toOpenAIResponse(endpoint, answer.json ?? parseJson(answer.res.bytes ?? Buffer.alloc(0)), context);
  } catch (error) {
    const why = error instanceof Error ? error.message : 'its shape is not the one expected';
    throw unreadableAnswer(answer.target.provider.name, answer.res, why.slice(0, 300));
  }
}

/** What OpenAI sends for `encoding_format: "base64"` (the official client's default): little-endian float32 bytes. */
function embeddingsAsBase64(body: Record<string, unknown>): void {
  const data = Array.isArray(body.data) ? (body.data as Array<{ embedding?: unknown }>) : [];
  for (const item of data) {
    if (Array.isArray(item.embedding))
      item.embedding = Buffer.from(new Float32Array(item.embedding as number[]).buffer).toString('base64');
  }
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
}

/**
 * A provider's 4xx/5xx on a unified route: the provider's status, in our error body, keeping
 * the provider's message (and its type and code when it gave them in the OpenAI shape).
 */
function sendUpstreamError(reply: GatewayReply, draft: RequestLogDraft, answer: UpstreamAnswer) {
  const status = answer.res.statusCode;
  const bytes = answer.res.bytes ?? Buffer.alloc(0);
  const parsed = parseJson(bytes) as { error?: unknown; message?: unknown } | null;
  const inner =
    parsed && typeof parsed.error === 'object' && parsed.error !== null
      ? (parsed.error as Record<string, unknown>)
      : null;
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
  // The provider's retry-after, rate-limit and request-id headers: SDK retries honour them.
  return reply
    .code(status)
    .headers(providerSignalHeaders(answer.res.headers))
    .header('x-service-upstream-status', String(status))
    .type('application/json; charset=utf-8')
    .send(body);
}

export { parseJson };
