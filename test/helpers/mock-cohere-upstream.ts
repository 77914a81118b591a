import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback-server.js';

/**
 * A stand-in for api.cohere.com speaking API v2 as documented (docs.cohere.com/reference/chat,
 * /embed, /rerank, v2/docs/streaming): `POST /v2/chat` JSON answers and SSE streams framed as
 * `event: <type>\ndata: {"type": …}\n\n`, `POST /v2/embed` (`embeddings_by_type`),
 * `POST /v2/rerank`, and `{ message }` error bodies. Usage carries both `billed_units` and
 * (larger) `tokens`, so tests can tell which one the gateway counts.
 */

export interface RecordedCohereRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  json: any;
}

export type CohereBehaviour =
  /** That status with Cohere's `{ message }` body (or `body` as given). */
  | { kind: 'error'; status: number; message?: string; body?: unknown }
  /** A stream that sends `deltas` content deltas, then ends with finish_reason ERROR. */
  | { kind: 'stream-error'; deltas: number };

export interface MockCohere {
  /** e.g. 'http://127.0.0.1:12345', to use as `x-service-custom-host`. */
  url: string;
  requests: RecordedCohereRequest[];
  behave(next: CohereBehaviour | null): void;
  close(): Promise<void>;
}

/** The words every chat answer is made of (one content-delta each when streamed). */
export const COHERE_REPLY = ['Hello', ' from', ' the', ' Cohere', ' mock.'];
/** Billed and seen token counts every chat answer reports. */
export const COHERE_USAGE = {
  billed_units: { input_tokens: 11, output_tokens: 5 },
  tokens: { input_tokens: 211, output_tokens: 7 },
};
export const COHERE_TOOL_ARGUMENTS = '{"location":"Madrid"}';

type Json = Record<string, any>;

export async function startMockCohere(): Promise<MockCohere> {
  const requests: RecordedCohereRequest[] = [];
  let behaviour: CohereBehaviour | null = null;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let json: Json;
    try {
      json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
    } catch {
      return sendJson(res, 400, { id: randomUUID(), message: 'invalid request: body is not valid JSON.' });
    }
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, json });
    if (!req.headers.authorization?.startsWith('Bearer '))
      return sendJson(res, 401, { id: randomUUID(), message: 'no api key supplied' });
    if (behaviour?.kind === 'error')
      return sendJson(
        res,
        behaviour.status,
        behaviour.body ?? { id: randomUUID(), message: behaviour.message ?? 'invalid request: mock error.' },
      );
    if (typeof json.model !== 'string')
      return sendJson(res, 400, {
        id: randomUUID(),
        message: 'invalid request: a model parameter is required for this endpoint.',
      });

    if (req.method === 'POST' && req.url === '/v2/chat')
      return json.stream === true ? streamChat(res, json, behaviour) : sendJson(res, 200, chatAnswer(json));
    if (req.method === 'POST' && req.url === '/v2/embed') {
      if (typeof json.input_type !== 'string')
        return sendJson(res, 400, {
          id: randomUUID(),
          message: 'invalid request: valid input_type must be provided with the provided model',
        });
      return sendJson(res, 200, embedAnswer(json));
    }
    if (req.method === 'POST' && req.url === '/v2/rerank') return sendJson(res, 200, rerankAnswer(json));
    return sendJson(res, 404, { id: randomUUID(), message: `path ${req.url} not found` });
  };

  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  const loopback = await listenOnLoopback(server);
  return {
    url: loopback.url,
    requests,
    behave(next) {
      behaviour = next;
    },
    close: () => loopback.close(),
  };
}

/** Tools offered and no tool result yet: call the first tool; otherwise answer in text. */
function wantsToolCall(json: Json): boolean {
  const last = Array.isArray(json.messages) ? json.messages[json.messages.length - 1] : undefined;
  return Array.isArray(json.tools) && json.tools.length > 0 && json.tool_choice !== 'NONE' && last?.role !== 'tool';
}

function toolCall(json: Json) {
  return {
    id: `${json.tools[0].function.name}_${randomUUID().slice(0, 12)}`,
    type: 'function',
    function: { name: json.tools[0].function.name, arguments: COHERE_TOOL_ARGUMENTS },
  };
}

function chatAnswer(json: Json): Json {
  if (wantsToolCall(json)) {
    return {
      id: randomUUID(),
      finish_reason: 'TOOL_CALL',
      message: { role: 'assistant', tool_plan: 'I will look up the weather.', tool_calls: [toolCall(json)] },
      usage: COHERE_USAGE,
    };
  }
  const words = replyWords(json);
  return {
    id: randomUUID(),
    finish_reason: words.length < COHERE_REPLY.length ? 'MAX_TOKENS' : 'COMPLETE',
    message: { role: 'assistant', content: [{ type: 'text', text: words.join('') }] },
    usage: COHERE_USAGE,
  };
}

function replyWords(json: Json): string[] {
  return typeof json.max_tokens === 'number' && json.max_tokens < COHERE_REPLY.length
    ? COHERE_REPLY.slice(0, json.max_tokens)
    : COHERE_REPLY;
}

function streamChat(res: ServerResponse, json: Json, behaviour: CohereBehaviour | null) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, body: Json) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`);
  send('message-start', {
    id: randomUUID(),
    delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
  });
  if (wantsToolCall(json)) {
    const call = toolCall(json);
    send('tool-plan-delta', { delta: { message: { tool_plan: 'I will look up the weather.' } } });
    send('tool-call-start', {
      index: 0,
      delta: { message: { tool_calls: { ...call, function: { name: call.function.name, arguments: '' } } } },
    });
    for (const piece of ['{"location"', ':"Madrid"}'])
      send('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: piece } } } } });
    send('tool-call-end', { index: 0 });
    send('message-end', { delta: { finish_reason: 'TOOL_CALL', usage: COHERE_USAGE } });
    return res.end();
  }
  const words = behaviour?.kind === 'stream-error' ? COHERE_REPLY.slice(0, behaviour.deltas) : replyWords(json);
  send('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
  for (const text of words) send('content-delta', { index: 0, delta: { message: { content: { text } } } });
  if (behaviour?.kind === 'stream-error') {
    send('message-end', { delta: { finish_reason: 'ERROR', usage: COHERE_USAGE } });
    return res.end();
  }
  send('content-end', { index: 0 });
  send('message-end', {
    delta: { finish_reason: words.length < COHERE_REPLY.length ? 'MAX_TOKENS' : 'COMPLETE', usage: COHERE_USAGE },
  });
  res.end();
}

/** Each text's embedding is [length, index, 0.5, …] (8 floats), so tests can check order. */
function embedAnswer(json: Json): Json {
  const texts: string[] = Array.isArray(json.texts) ? json.texts : [];
  const size = typeof json.output_dimension === 'number' ? json.output_dimension : 8;
  const float = texts.map((text, i) =>
    Array.from({ length: size }, (_, j) => (j === 0 ? text.length : j === 1 ? i : 0.5)),
  );
  const inputTokens = texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return {
    id: randomUUID(),
    embeddings: { float },
    texts,
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: inputTokens } },
    response_type: 'embeddings_by_type',
  };
}

/** Documents that share more words with the query rank higher; ties keep their order. */
function rerankAnswer(json: Json): Json {
  const words = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);
  const query = words(String(json.query ?? ''));
  const documents: string[] = Array.isArray(json.documents) ? json.documents : [];
  const scored = documents.map((doc, index) => {
    const overlap = [...words(doc)].filter((w) => query.has(w)).length;
    return { index, relevance_score: Math.round((0.1 + (overlap / Math.max(1, query.size)) * 0.8) * 1e4) / 1e4 };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const topN = typeof json.top_n === 'number' ? json.top_n : scored.length;
  return {
    id: randomUUID(),
    results: scored.slice(0, topN),
    meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } },
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}
