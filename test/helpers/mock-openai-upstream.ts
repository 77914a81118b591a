import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A stand-in for api.openai.com that speaks the real wire format (shapes checked against the
 * API reference and the official `openai` client's types), so gateway tests and the benchmark
 * exercise what a real provider sends: SSE framing, `stream_options.include_usage`, the
 * `{ error: { message, type, param, code } }` body, base64 embeddings, binary audio.
 *
 * It is a bare `node:http` server so that it costs next to nothing in benchmarks, and it
 * imports nothing from vitest so that `scripts/mock-provider.ts` can run it as a process.
 * Tests close it themselves: `onTestFinished(() => mock.close())`.
 */

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The parsed body when the request said it was JSON and it parsed. */
  json?: unknown;
}

/** How the mock answers the requests that follow `behave(...)`; see `MockOpenAI.behave`. */
export type Behaviour =
  /** That status with `body` (default: an OpenAI error body that fits the status) and headers. */
  | { kind: 'error'; status: number; body?: unknown; headers?: Record<string, string> }
  /** The normal answer, `ms` later (time to first byte). */
  | { kind: 'delay'; ms: number }
  /** Drops the connection without a byte of response. */
  | { kind: 'destroy' }
  /** 200 SSE with `chunks` chat.completion.chunk events, then silence; never ends. */
  | { kind: 'stream-then-hang'; chunks: number }
  /** Exactly these bytes. */
  | { kind: 'raw'; status: number; headers: Record<string, string>; body: Buffer };

export interface MockOpenAIOptions {
  /** Default 0 (ephemeral). The host is always 127.0.0.1. */
  port?: number;
  /** Keep every request in `requests` (default true); benchmarks turn it off. */
  record?: boolean;
  /** Words in every chat/completion/responses reply, one SSE chunk each when streamed (default 5). */
  streamChunks?: number;
  /** Pause between SSE chunks, to look like a model generating (default 0). */
  chunkDelayMs?: number;
  /** Start with streams held after their first chunk until `releaseStreams()` (default false). */
  holdStream?: boolean;
  /** Embedding length when the request does not ask for `dimensions` (default 8). */
  dimensions?: number;
  /** When set, OpenAI routes answer 401 unless `authorization: Bearer <apiKey>` is sent. */
  apiKey?: string;
  /** Ids served by GET /v1/models. */
  models?: string[];
  /**
   * Report chat prompt tokens the way OpenAI bills them (o200k_base, 3 tokens per message and
   * 3 to prime the reply, tools as their JSON, 765 per image) instead of a quarter of the
   * characters (default false): budget tests need the real figure.
   */
  tokenizerUsage?: boolean;
}

export interface MockOpenAI {
  /** e.g. 'http://127.0.0.1:12345' (no /v1). */
  url: string;
  /** `url` + '/v1', what an OpenAI client takes as its base URL. */
  baseUrl: string;
  /** Every request received, in arrival order (empty with `record: false`). */
  requests: RecordedRequest[];
  /** Requests whose client went away before the response was complete (not counting `destroy` or `close()`). */
  readonly aborted: number;
  /**
   * Sets how the following requests are answered (null: normally). It lasts until changed,
   * or for `times` requests, after which the mock answers normally again (retry tests).
   */
  behave(next: Behaviour | null, options?: { times?: number }): void;
  /** From now on, SSE responses stop after their first chunk until `releaseStreams()`. */
  holdStreams(): void;
  /** Lets held streams go on, and stops holding new ones. */
  releaseStreams(): void;
  /** Resolves once `aborted` has reached `count`, so disconnect tests need not poll. */
  waitForAborted(count?: number): Promise<void>;
  /** Clears recorded requests, the abort count and the behaviour. */
  reset(): void;
  /** From now on, OpenAI routes answer 401 unless this key is sent (as the `apiKey` option; undefined: any key). */
  acceptApiKey(key: string | undefined): void;
  /** Closes the server and destroys open sockets (hanging and held streams included). */
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

/** What a route decides to send; `send` turns it into bytes, applying pacing and holds. */
type Reply =
  | { type: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | { type: 'bytes'; status: number; headers: Record<string, string>; body: Buffer; chunked?: boolean }
  | { type: 'sse'; frames: string[] };

interface Ctx {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  json: Json;
  words: number;
  dimensions: number;
  models: string[];
  countTokens: ((text: string) => number) | null;
}

const DEFAULT_MODELS = [
  'gpt-4o-mini',
  'gpt-4o',
  'gpt-4.1-mini',
  'text-embedding-3-small',
  'omni-moderation-latest',
  'gpt-image-1',
  'tts-1',
  'whisper-1',
];
const FINGERPRINT = 'fp_m0ck0pena1';
const FILLER = ['lorem', 'ipsum', 'dolor', 'sit', 'amet'];
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
/** A valid 1x1 PNG, so image clients that decode `b64_json` get a real image. */
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const AUDIO_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/**
 * The assistant text the mock answers with, so tests can predict it: the length of the last
 * user message, padded or cut to `words` words ('Hello from mock: 11 chars.' at the default 5).
 */
export function mockReply(lastUserMessage: string, words = 5): string {
  return replyTokens(lastUserMessage.length, words).join('');
}

export async function startMockOpenAI(options: MockOpenAIOptions = {}): Promise<MockOpenAI> {
  const record = options.record ?? true;
  let acceptedKey = options.apiKey;
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const wakers = new Set<() => void>();
  let aborted = 0;
  let abortWaiters: Array<{ count: number; resolve: () => void }> = [];
  let behaviour: Behaviour | null = null;
  let remaining: number | undefined;
  let holding = options.holdStream ?? false;
  let heldStreams: Array<() => void> = [];
  let closing = false;
  const encoding = options.tokenizerUsage ? await import('gpt-tokenizer/encoding/o200k_base') : null;
  const countTokens = encoding ? (text: string) => encoding.countTokens(text, { disallowedSpecial: new Set() }) : null;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      wakers.add(wake);
    });

  const countAbort = () => {
    aborted += 1;
    abortWaiters = abortWaiters.filter((w) => (aborted >= w.count ? (w.resolve(), false) : true));
  };

  const takeBehaviour = (): Behaviour | null => {
    const current = behaviour;
    if (current && remaining !== undefined && --remaining <= 0) {
      behaviour = null;
      remaining = undefined;
    }
    return current;
  };

  const send = async (res: ServerResponse, reply: Reply): Promise<void> => {
    if (reply.type === 'json') {
      const body = JSON.stringify(reply.body);
      res.writeHead(reply.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-request-id': requestId(),
        ...reply.headers,
      });
      res.end(body);
      return;
    }
    if (reply.type === 'bytes') {
      res.writeHead(
        reply.status,
        reply.chunked ? reply.headers : { 'content-length': reply.body.length, ...reply.headers },
      );
      if (reply.chunked && reply.body.length > 1) res.write(reply.body.subarray(0, reply.body.length >> 1));
      res.end(reply.chunked && reply.body.length > 1 ? reply.body.subarray(reply.body.length >> 1) : reply.body);
      return;
    }
    writeSseHead(res);
    for (let i = 0; i < reply.frames.length; i++) {
      if (i === 1 && holding) await new Promise<void>((resolve) => heldStreams.push(resolve));
      else if (i > 0 && chunkDelayMs > 0) await sleep(chunkDelayMs);
      if (res.destroyed || closing) return;
      res.write(reply.frames[i]);
    }
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let dropped = false;
    res.on('close', () => {
      if (!res.writableFinished && !dropped && !closing) countAbort();
    });
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch {
      return;
    }
    const url = req.url ?? '/';
    const contentType = req.headers['content-type'] ?? '';
    const json = body.length > 0 && contentType.includes('json') ? parseJson(body) : undefined;
    if (record)
      requests.push({
        method: req.method ?? 'GET',
        url,
        headers: req.headers,
        body,
        ...(json === undefined ? {} : { json }),
      });

    const now = takeBehaviour();
    if (now?.kind === 'destroy') {
      dropped = true;
      req.socket.destroy();
      return;
    }
    if (now?.kind === 'error') {
      const custom = now.body !== undefined;
      const raw = typeof now.body === 'string' || Buffer.isBuffer(now.body);
      if (raw)
        return send(res, {
          type: 'bytes',
          status: now.status,
          headers: { 'content-type': 'text/plain', ...now.headers },
          body: Buffer.from(now.body as string | Buffer),
        });
      return send(res, {
        type: 'json',
        status: now.status,
        body: custom ? now.body : defaultErrorBody(now.status),
        ...(now.headers ? { headers: now.headers } : {}),
      });
    }
    if (now?.kind === 'raw')
      return send(res, { type: 'bytes', status: now.status, headers: now.headers, body: now.body });
    if (now?.kind === 'stream-then-hang') {
      writeSseHead(res);
      const chunk = chatChunker(isObject(json) && typeof json.model === 'string' ? json.model : 'gpt-4o-mini', false);
      for (let i = 0; i < now.chunks; i++)
        res.write(chunk(i === 0 ? { role: 'assistant', content: 'tok' } : { content: ' tok' }, null));
      return;
    }
    if (now?.kind === 'delay') {
      await sleep(now.ms);
      if (res.destroyed || closing) return;
    }

    const [path = '/'] = url.split('?');
    const ctx: Ctx = {
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body,
      json: {},
      words: options.streamChunks ?? 5,
      dimensions: options.dimensions ?? 8,
      countTokens,
      models: options.models ?? DEFAULT_MODELS,
    };
    const route = ROUTES[`${ctx.method} ${path}`] ?? dynamicRoute(ctx);
    if (!route) return send(res, echoReply(ctx, url));
    if (acceptedKey !== undefined && !route.open && req.headers.authorization !== `Bearer ${acceptedKey}`) {
      return send(
        res,
        openaiError(401, 'Incorrect API key provided.', 'invalid_request_error', null, 'invalid_api_key'),
      );
    }
    if (route.json) {
      const parsed = parseJson(body);
      if (!isObject(parsed))
        return send(
          res,
          openaiError(
            400,
            'We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.',
            'invalid_request_error',
          ),
        );
      ctx.json = parsed;
    }
    await send(res, route.handler(ctx));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) void send(res, openaiError(500, `mock failure: ${String(err)}`, 'server_error'));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  let closed: Promise<void> | null = null;
  const releaseStreams = () => {
    holding = false;
    const held = heldStreams;
    heldStreams = [];
    for (const go of held) go();
  };

  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    get aborted() {
      return aborted;
    },
    behave(next, opts = {}) {
      behaviour = next;
      remaining = next && opts.times !== undefined ? opts.times : undefined;
    },
    holdStreams() {
      holding = true;
    },
    releaseStreams,
    waitForAborted(count = 1) {
      if (aborted >= count) return Promise.resolve();
      return new Promise((resolve) => abortWaiters.push({ count, resolve }));
    },
    acceptApiKey(key) {
      acceptedKey = key;
    },
    reset() {
      requests.length = 0;
      aborted = 0;
      behaviour = null;
      remaining = undefined;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
        releaseStreams();
        for (const wake of [...wakers]) wake();
        server.close(() => resolve());
      });
      return closed;
    },
  };
}

interface Route {
  json: boolean;
  /** Served without the `apiKey` check (test plumbing, not an OpenAI route). */
  open?: boolean;
  handler(ctx: Ctx): Reply;
}

const ROUTES: Record<string, Route> = {
  'POST /v1/chat/completions': { json: true, handler: chatCompletions },
  'POST /v1/completions': { json: true, handler: completions },
  'POST /v1/embeddings': { json: true, handler: embeddings },
  'POST /v1/rerank': { json: true, handler: rerank },
  'POST /v1/images/generations': { json: true, handler: images },
  'POST /v1/audio/speech': { json: true, handler: speech },
  'POST /v1/audio/transcriptions': { json: false, handler: (ctx) => transcription(ctx, 'Mock transcription.') },
  'POST /v1/audio/translations': { json: false, handler: (ctx) => transcription(ctx, 'Mock translation.') },
  'POST /v1/moderations': { json: true, handler: moderations },
  'POST /v1/responses': { json: true, handler: responses },
  'GET /v1/models': { json: false, handler: (ctx) => ok({ object: 'list', data: ctx.models.map(modelObject) }) },
};

function dynamicRoute(ctx: Ctx): Route | undefined {
  if (ctx.method !== 'GET') return undefined;
  const binary = /^\/v1\/binary\/(\d+)$/.exec(ctx.path);
  if (binary) return { json: false, open: true, handler: () => binaryReply(Number(binary[1])) };
  const model = /^\/v1\/models\/([^/]+)$/.exec(ctx.path);
  if (!model) return undefined;
  const id = decodeURIComponent(model[1] ?? '');
  return {
    json: false,
    handler: (c) =>
      c.models.includes(id)
        ? ok(modelObject(id))
        : openaiError(404, `The model '${id}' does not exist`, 'invalid_request_error', 'model', 'model_not_found'),
  };
}

// --- chat and legacy completions ------------------------------------------------------------

function chatCompletions(ctx: Ctx): Reply {
  const { json } = ctx;
  const invalid = requireFields(json, { model: 'string', messages: 'array' });
  if (invalid) return invalid;
  const messages = json.messages as unknown[];
  if (messages.length === 0)
    return openaiError(
      400,
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'invalid_request_error',
      'messages',
      'empty_array',
    );
  const model = json.model as string;
  const promptChars = messages.reduce<number>((n, m) => n + textOf(isObject(m) ? m.content : undefined).length, 0);
  const lastUser = [...messages].reverse().find((m) => isObject(m) && m.role === 'user');
  const { tokens, finish } = plan(ctx, textOf(isObject(lastUser) ? lastUser.content : undefined).length);
  const usage = completionUsage(
    ctx.countTokens ? chatPromptTokens(json, ctx.countTokens) : Math.ceil(promptChars / 4),
    tokens.length,
  );

  if (json.stream !== true) {
    return ok({
      id: `chatcmpl-${randomId()}`,
      object: 'chat.completion',
      created: nowSeconds(),
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: tokens.join(''), refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: finish,
        },
      ],
      usage,
      service_tier: 'default',
      system_fingerprint: FINGERPRINT,
    });
  }
  const includeUsage = isObject(json.stream_options) && json.stream_options.include_usage === true;
  const chunk = chatChunker(model, includeUsage);
  const frames = [
    chunk({ role: 'assistant', content: '', refusal: null }, null),
    ...tokens.map((t) => chunk({ content: t }, null)),
    chunk({}, finish),
  ];
  if (includeUsage) frames.push(chunk(null, null, usage));
  frames.push('data: [DONE]\n\n');
  return { type: 'sse', frames };
}

/** Chat prompt tokens as OpenAI counts them: the chat format around each message, tool calls, tools and schemas. */
function chatPromptTokens(json: Json, count: (text: string) => number): number {
  let total = 3;
  for (const m of json.messages as unknown[]) {
    if (!isObject(m)) continue;
    total += 3 + count(typeof m.role === 'string' ? m.role : '') + count(textOf(m.content));
    if (Array.isArray(m.content)) total += m.content.filter((p) => isObject(p) && p.type === 'image_url').length * 765;
    if (typeof m.name === 'string') total += 1 + count(m.name);
    for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
      const fn = isObject(call) && isObject(call.function) ? call.function : {};
      total +=
        3 +
        count(typeof fn.name === 'string' ? fn.name : '') +
        count(typeof fn.arguments === 'string' ? fn.arguments : '');
    }
  }
  if (Array.isArray(json.tools)) total += count(JSON.stringify(json.tools));
  if (isObject(json.response_format)) total += count(JSON.stringify(json.response_format));
  return total;
}

/** Frames for one chat stream: each chunk shares id and created; `delta: null` means the usage chunk (`choices: []`). */
function chatChunker(model: string, includeUsage: boolean) {
  const base = {
    id: `chatcmpl-${randomId()}`,
    object: 'chat.completion.chunk',
    created: nowSeconds(),
    model,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
  return (delta: Json | null, finish: string | null, usage?: Json) =>
    sse({
      ...base,
      choices: delta ? [{ index: 0, delta, logprobs: null, finish_reason: finish }] : [],
      ...(includeUsage ? { usage: usage ?? null } : {}),
    });
}

function completions(ctx: Ctx): Reply {
  const { json } = ctx;
  const invalid = requireFields(json, { model: 'string', prompt: 'any' });
  if (invalid) return invalid;
  const model = json.model as string;
  const prompts =
    Array.isArray(json.prompt) && json.prompt.some((p) => typeof p !== 'number') ? json.prompt : [json.prompt];
  const promptTokens = prompts.reduce<number>((n, p) => n + tokenCount(p), 0);
  const { tokens, finish } = plan(ctx, promptLength(prompts[prompts.length - 1]));
  const usage = completionUsage(promptTokens, tokens.length);
  const base = { id: `cmpl-${randomId()}`, object: 'text_completion', created: nowSeconds(), model };
  if (json.stream !== true) {
    return ok({
      ...base,
      choices: [{ text: tokens.join(''), index: 0, logprobs: null, finish_reason: finish }],
      usage,
      system_fingerprint: FINGERPRINT,
    });
  }
  const includeUsage = isObject(json.stream_options) && json.stream_options.include_usage === true;
  const chunk = (text: string, finishReason: string | null) =>
    sse({
      ...base,
      choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });
  const frames = [...tokens.map((t) => chunk(t, null)), chunk('', finish)];
  if (includeUsage) frames.push(sse({ ...base, choices: [], usage }));
  frames.push('data: [DONE]\n\n');
  return { type: 'sse', frames };
}

// --- Responses API --------------------------------------------------------------------------

function responses(ctx: Ctx): Reply {
  const { json } = ctx;
  const invalid = requireFields(json, { model: 'string' });
  if (invalid) return invalid;
  const input = json.input ?? '';
  const items =
    typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? input.filter(isObject) : [];
  const inputChars =
    items.reduce<number>((n, m) => n + textOf(m.content).length, 0) +
    (typeof json.instructions === 'string' ? json.instructions.length : 0);
  const lastUser = [...items].reverse().find((m) => m.role === 'user' || m.role === undefined);
  const { tokens, finish } = plan(ctx, textOf(lastUser?.content).length);
  const text = tokens.join('');
  const inputTokens = Math.ceil(inputChars / 4);
  const msgId = `msg_${randomId()}`;
  const id = `resp_${randomId()}`;
  const createdAt = nowSeconds();
  const part = (t: string) => ({ type: 'output_text', text: t, annotations: [], logprobs: [] });
  const message = (status: string, t: string | null) => ({
    id: msgId,
    type: 'message',
    status,
    role: 'assistant',
    content: t === null ? [] : [part(t)],
  });
  const response = (status: string, done: boolean) => ({
    id,
    object: 'response',
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: finish === 'length' && done ? { reason: 'max_output_tokens' } : null,
    instructions: json.instructions ?? null,
    max_output_tokens: json.max_output_tokens ?? null,
    model: json.model,
    output: done ? [message('completed', text)] : [],
    parallel_tool_calls: true,
    previous_response_id: json.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: json.store ?? true,
    temperature: json.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: json.top_p ?? 1,
    truncation: 'disabled',
    usage: done
      ? {
          input_tokens: inputTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: tokens.length,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: inputTokens + tokens.length,
        }
      : null,
    user: null,
    metadata: json.metadata ?? {},
  });
  const final = response(finish === 'length' ? 'incomplete' : 'completed', true);
  if (json.stream !== true) return ok(final);

  let seq = 0;
  const event = (type: string, data: Json) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const at = { item_id: msgId, output_index: 0, content_index: 0 };
  const frames = [
    event('response.created', { response: response('in_progress', false) }),
    event('response.output_item.added', { output_index: 0, item: message('in_progress', null) }),
    event('response.content_part.added', { ...at, part: part('') }),
    ...tokens.map((delta) => event('response.output_text.delta', { ...at, delta, logprobs: [] })),
    event('response.output_text.done', { ...at, text, logprobs: [] }),
    event('response.content_part.done', { ...at, part: part(text) }),
    event('response.output_item.done', { output_index: 0, item: message('completed', text) }),
    event(finish === 'length' ? 'response.incomplete' : 'response.completed', { response: final }),
  ];
  return { type: 'sse', frames };
}

// --- embeddings, rerank, moderations --------------------------------------------------------

function embeddings(ctx: Ctx): Reply {
  const { json } = ctx;
  const invalid = requireFields(json, { model: 'string', input: 'any' });
  if (invalid) return invalid;
  const inputs = Array.isArray(json.input) && json.input.some((p) => typeof p !== 'number') ? json.input : [json.input];
  if (inputs.length === 0 || inputs.some((i) => i === '' || (Array.isArray(i) && i.length === 0))) {
    return openaiError(400, "'$.input' is invalid. Please check the API reference.", 'invalid_request_error');
  }
  const dims =
    typeof json.dimensions === 'number' && json.dimensions > 0 ? Math.floor(json.dimensions) : ctx.dimensions;
  const base64 = json.encoding_format === 'base64';
  const data = inputs.map((input, index) => {
    const vector = embedVector(typeof input === 'string' ? input : JSON.stringify(input), dims);
    return {
      object: 'embedding',
      index,
      embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
    };
  });
  const promptTokens = inputs.reduce<number>((n, p) => n + tokenCount(p), 0);
  return ok({
    object: 'list',
    data,
    model: json.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}

/**
 * Values are k/1024 with |k| < 1000: exact in float32, so a vector read from base64 equals
 * the JSON one bit for bit.
 */
function embedVector(text: string, dims: number): number[] {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return Array.from({ length: dims }, (_, j) => (((h + j * 7919) % 1999) - 999) / 1024);
}

/**
 * Cohere's /v2/rerank response (`results` sorted by `relevance_score`, `meta.billed_units`);
 * `document: { text }` is added when `return_documents` is true, as Cohere v1 and Jina do.
 */
function rerank(ctx: Ctx): Reply {
  const { json } = ctx;
  const invalid = requireFields(json, { query: 'string', documents: 'array' });
  if (invalid) return invalid;
  const queryWords = words(json.query as string);
  const docs = (json.documents as unknown[]).map((d) =>
    typeof d === 'string' ? d : isObject(d) && typeof d.text === 'string' ? d.text : JSON.stringify(d),
  );
  const scored = docs.map((text, index) => {
    const docWords = new Set(words(text));
    const overlap = queryWords.length === 0 ? 0 : queryWords.filter((w) => docWords.has(w)).length / queryWords.length;
    return { index, relevance_score: Math.round((0.05 + 0.9 * overlap + 0.04 / (index + 1)) * 1e6) / 1e6 };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const topN = typeof json.top_n === 'number' ? json.top_n : scored.length;
  const results = scored
    .slice(0, topN)
    .map((r) => (json.return_documents === true ? { ...r, document: { text: docs[r.index] } } : r));
  return ok({
    id: randomUUID(),
    results,
    meta: { api_version: { version: '2', is_experimental: false }, billed_units: { search_units: 1 } },
  });
}

const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
];

/** One result per input; an input containing "FLAG" is flagged for violence, everything else passes. */
function moderations(ctx: Ctx): Reply {
  const { json } = ctx;
  const invalid = requireFields(json, { input: 'any' });
  if (invalid) return invalid;
  const inputs = Array.isArray(json.input) ? json.input : [json.input];
  const results = inputs.map((input) => {
    const flagged = textOf(isObject(input) && input.type === 'text' ? input.text : input).includes('FLAG');
    const fields = (value: (c: string) => unknown) =>
      Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, value(c)]));
    return {
      flagged,
      categories: fields((c) => flagged && c === 'violence'),
      category_scores: fields((c) => (flagged && c === 'violence' ? 0.98 : 0.0001)),
      category_applied_input_types: fields(() => ['text']),
    };
  });
  return ok({
    id: `modr-${randomId()}`,
    model: typeof json.model === 'string' ? json.model : 'omni-moderation-latest',
    results,
  });
}

// --- images and audio ----------------------------------------------------------------------

function images(ctx: Ctx): Reply {
  const { json } = ctx;
  const invalid = requireFields(json, { prompt: 'string' });
  if (invalid) return invalid;
  const n = typeof json.n === 'number' && json.n > 0 ? Math.floor(json.n) : 1;
  const model = typeof json.model === 'string' ? json.model : 'dall-e-2';
  const asUrl = json.response_format === 'url';
  const data = Array.from({ length: n }, (_, i) =>
    asUrl ? { url: `https://images.mock.invalid/${randomId()}-${i}.png` } : { b64_json: PNG_1X1 },
  );
  const promptTokens = Math.ceil((json.prompt as string).length / 4);
  const usage = model.startsWith('gpt-image')
    ? {
        usage: {
          input_tokens: promptTokens,
          input_tokens_details: { image_tokens: 0, text_tokens: promptTokens },
          output_tokens: 272 * n,
          total_tokens: promptTokens + 272 * n,
        },
      }
    : {};
  return ok({ created: nowSeconds(), data, ...usage });
}

/** An ID3 header, an MPEG frame sync, then every byte value: binary pass-through must not mangle it. */
function speech(ctx: Ctx): Reply {
  const invalid = requireFields(ctx.json, { model: 'string', input: 'string', voice: 'any' });
  if (invalid) return invalid;
  const format = typeof ctx.json.response_format === 'string' ? ctx.json.response_format : 'mp3';
  const header = Buffer.from([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0, 0xff, 0xfb, 0x90, 0x00]);
  const ramp = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  return {
    type: 'bytes',
    status: 200,
    headers: { 'content-type': AUDIO_TYPES[format] ?? 'audio/mpeg', 'x-request-id': requestId() },
    body: Buffer.concat([header, ramp]),
    chunked: true,
  };
}

/** The multipart body is only recorded; `response_format` is read from it so text formats answer text/plain. */
function transcription(ctx: Ctx, text: string): Reply {
  const format =
    /name="response_format"\r\n(?:[^\r\n]+\r\n)*\r\n([^\r\n]*)/.exec(ctx.body.toString('latin1'))?.[1] ?? 'json';
  if (format === 'text' || format === 'srt' || format === 'vtt') {
    return {
      type: 'bytes',
      status: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'x-request-id': requestId() },
      body: Buffer.from(`${text}\n`),
    };
  }
  return ok({ text });
}

// --- pass-through helpers ------------------------------------------------------------------

/** Everything the mock does not serve: what arrived, so pass-through tests can compare bytes. */
function echoReply(ctx: Ctx, url: string): Reply {
  const connection = String(ctx.headers.connection ?? '')
    .toLowerCase()
    .split(',')
    .map((s) => s.trim());
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < ctx.rawHeaders.length; i += 2) {
    const name = (ctx.rawHeaders[i] ?? '').toLowerCase();
    if (HOP_BY_HOP.has(name) || connection.includes(name)) continue;
    const value = ctx.rawHeaders[i + 1] ?? '';
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return ok({ method: ctx.method, path: url, headers, body_base64: ctx.body.toString('base64') });
}

function binaryReply(n: number): Reply {
  const body = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) body[i] = i & 0xff;
  return {
    type: 'bytes',
    status: 200,
    headers: { 'content-type': 'application/octet-stream', 'x-mock-header': 'yes' },
    body,
  };
}

// --- small pieces --------------------------------------------------------------------------

function plan(ctx: Ctx, inputChars: number): { tokens: string[]; finish: 'stop' | 'length' } {
  const { json } = ctx;
  const cap = [json.max_completion_tokens, json.max_tokens, json.max_output_tokens].find(
    (v): v is number => typeof v === 'number' && v > 0,
  );
  const count = cap !== undefined && cap < ctx.words ? cap : ctx.words;
  return { tokens: replyTokens(inputChars, count), finish: count < ctx.words ? 'length' : 'stop' };
}

/** Words with their leading space, the way a tokenizer splits them, so joining them gives the text. */
function replyTokens(inputChars: number, count: number): string[] {
  const head = ['Hello', 'from', 'mock:', String(inputChars), 'chars.'];
  return Array.from({ length: count }, (_, i) => `${i === 0 ? '' : ' '}${head[i] ?? FILLER[i % FILLER.length]}`);
}

function completionUsage(prompt: number, completion: number) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** A message `content` as text: a string, or the `text` of its parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

function promptLength(prompt: unknown): number {
  return typeof prompt === 'string' ? prompt.length : Array.isArray(prompt) ? prompt.length * 4 : 0;
}

function tokenCount(input: unknown): number {
  return typeof input === 'string' ? Math.ceil(input.length / 4) : Array.isArray(input) ? input.length : 0;
}

const words = (text: string) => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];

function requireFields(json: Json, fields: Record<string, 'string' | 'array' | 'any'>): Reply | null {
  for (const [name, kind] of Object.entries(fields)) {
    const value = json[name];
    if (value === undefined || value === null)
      return openaiError(
        400,
        `Missing required parameter: '${name}'.`,
        'invalid_request_error',
        name,
        'missing_required_parameter',
      );
    const actual = Array.isArray(value) ? 'array' : typeof value;
    if (kind !== 'any' && actual !== kind) {
      return openaiError(
        400,
        `Invalid type for '${name}': expected ${kind === 'array' ? 'an array' : 'a string'}, but got ${actual === 'array' ? 'an array' : `a ${actual}`} instead.`,
        'invalid_request_error',
        name,
        'invalid_type',
      );
    }
  }
  return null;
}

function openaiError(
  status: number,
  message: string,
  type: string,
  param: string | null = null,
  code: string | null = null,
): Reply {
  return { type: 'json', status, body: { error: { message, type, param, code } } };
}

/** The body OpenAI sends for each family of status, for `behave({ kind: 'error', status })`. */
function defaultErrorBody(status: number): unknown {
  const [message, type, code] =
    status === 401
      ? ['Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key']
      : status === 403
        ? [
            'You are not allowed to access this resource.',
            'invalid_request_error',
            'unsupported_country_region_territory',
          ]
        : status === 404
          ? ['The model does not exist or you do not have access to it.', 'invalid_request_error', 'model_not_found']
          : status === 429
            ? ['Rate limit reached for requests. Please try again later.', 'requests', 'rate_limit_exceeded']
            : status >= 500
              ? ['The server had an error while processing your request. Sorry about that!', 'server_error', null]
              : ['Mock error.', 'invalid_request_error', null];
  return { error: { message, type, param: null, code } };
}

const writeSseHead = (res: ServerResponse) =>
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-request-id': requestId(),
  });
const ok = (body: unknown): Reply => ({ type: 'json', status: 200, body });
const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const modelObject = (id: string) => ({
  id,
  object: 'model',
  created: 1_700_000_000,
  owned_by: id.startsWith('gpt') || id.startsWith('text-') ? 'system' : 'openai',
});
const nowSeconds = () => Math.floor(Date.now() / 1000);
const randomId = () => randomBytes(12).toString('hex');
const requestId = () => `req_${randomBytes(16).toString('hex')}`;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('aborted', () => reject(new Error('aborted')));
  });
}
