import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback-server.js';

/**
 * A stand-in for api.anthropic.com speaking the Messages API as documented: JSON messages,
 * SSE streams framed `event: <name>\ndata: {...}\n\n` (message_start, content blocks with
 * text_delta and input_json_delta, ping, message_delta, message_stop), and error bodies
 * `{ type: 'error', error: { type, message }, request_id }`. It answers tool definitions with a
 * tool_use block, tool results with text quoting them, and can fail before or inside a stream.
 * Tests close it themselves: `onTestFinished(() => mock.close())`.
 */

type Json = Record<string, unknown>;

export interface RecordedAnthropicRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json?: Json;
}

export type AnthropicBehaviour =
  /** That status with Anthropic's error body. */
  | { kind: 'error'; status: number; type: string; message: string }
  /** 200 SSE: message_start, `afterDeltas` text deltas, then an `error` event and the end. */
  | { kind: 'stream-error'; afterDeltas: number; type?: string; message?: string }
  /** 200 SSE that stops after `afterDeltas` text deltas, without message_delta or message_stop. */
  | { kind: 'truncate'; afterDeltas: number };

export interface MockAnthropicOptions {
  /** When set, requests without `x-api-key: <apiKey>` get 401 authentication_error. */
  apiKey?: string;
  /** Reported as `cache_read_input_tokens` on every message (default 0). */
  cacheReadTokens?: number;
}

export interface MockAnthropic {
  /** e.g. 'http://127.0.0.1:12345' (no /v1). */
  url: string;
  requests: RecordedAnthropicRequest[];
  /** How the following requests are answered (null: normally), for `times` requests or until changed. */
  behave(next: AnthropicBehaviour | null, options?: { times?: number }): void;
  reset(): void;
  close(): Promise<void>;
}

/** The text the mock answers a user message with: 'Hello from mock: <n> chars.' (n = its length). */
export function mockAnthropicReply(lastUserText: string): string {
  return `Hello from mock: ${lastUserText.length} chars.`;
}

export const MOCK_TOOL_PREFACE = 'Let me check.';

export async function startMockAnthropic(options: MockAnthropicOptions = {}): Promise<MockAnthropic> {
  const requests: RecordedAnthropicRequest[] = [];
  let behaviour: AnthropicBehaviour | null = null;
  let remaining: number | undefined;

  const take = (): AnthropicBehaviour | null => {
    const current = behaviour;
    if (current && remaining !== undefined && --remaining <= 0) {
      behaviour = null;
      remaining = undefined;
    }
    return current;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const url = req.url ?? '/';
    const json = parseObject(body);
    requests.push({ method: req.method ?? 'GET', url, headers: req.headers, body, ...(json ? { json } : {}) });
    const path = url.split('?')[0];

    if (options.apiKey !== undefined && req.headers['x-api-key'] !== options.apiKey)
      return sendError(res, 401, 'authentication_error', 'invalid x-api-key');
    if (!req.headers['anthropic-version'])
      return sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
    const now = take();
    if (now?.kind === 'error') return sendError(res, now.status, now.type, now.message);

    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, {
        data: [{ type: 'model', id: 'claude-mock-1', display_name: 'Claude Mock', created_at: '2025-01-01T00:00:00Z' }],
        has_more: false,
        first_id: 'claude-mock-1',
        last_id: 'claude-mock-1',
      });
    }
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      if (!json) return sendError(res, 400, 'invalid_request_error', 'Request body is not valid JSON.');
      return sendJson(res, 200, { input_tokens: inputTokens(json) });
    }
    if (req.method !== 'POST' || path !== '/v1/messages') return sendError(res, 404, 'not_found_error', 'Not found');
    if (!json) return sendError(res, 400, 'invalid_request_error', 'Request body is not valid JSON.');
    const problem = validate(json);
    if (problem) return sendError(res, 400, 'invalid_request_error', problem);

    const message = answer(json, options.cacheReadTokens ?? 0);
    if (json.stream !== true) return sendJson(res, 200, message);
    writeStream(res, message, now);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'api_error', `mock failure: ${String(error)}`);
      else res.destroy();
    });
  });
  const loopback = await listenOnLoopback(server);

  return {
    url: loopback.url,
    requests,
    behave(next, opts = {}) {
      behaviour = next;
      remaining = next && opts.times !== undefined ? opts.times : undefined;
    },
    reset() {
      requests.length = 0;
      behaviour = null;
      remaining = undefined;
    },
    close: () => loopback.close(),
  };
}

// --- answers -------------------------------------------------------------------------------

/** Field checks in the API's own wording for the fields every request needs. */
function validate(json: Json): string | null {
  if (typeof json.model !== 'string') return 'model: Field required';
  if (typeof json.max_tokens !== 'number') return 'max_tokens: Field required';
  if (!Array.isArray(json.messages)) return 'messages: Field required';
  if (json.messages.length === 0) return 'messages: at least one message is required';
  return null;
}

/**
 * The Message the mock answers: a tool_use of the named (or first) tool when tools are offered
 * and the last turn is not a tool result; text quoting the tool result when it is; otherwise
 * the reply for the last user text, cut to `max_tokens` words.
 */
function answer(json: Json, cacheRead: number): Json {
  const messages = json.messages as Json[];
  const last = messages[messages.length - 1] ?? {};
  const blocks = Array.isArray(last.content) ? (last.content as Json[]) : [];
  const toolResult = blocks.find((block) => block.type === 'tool_result');
  const tools = Array.isArray(json.tools) ? (json.tools as Json[]) : [];
  const choice = (json.tool_choice ?? { type: 'auto' }) as Json;
  const usage = {
    input_tokens: inputTokens(json),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cacheRead,
    output_tokens: 0,
  };
  const base = {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model: json.model,
    stop_sequence: null,
  };

  if (!toolResult && tools.length > 0 && choice.type !== 'none') {
    const tool = tools.find((t) => t.name === choice.name) ?? tools[0]!;
    const input = sampleInput(tool.input_schema);
    const content = [
      { type: 'text', text: MOCK_TOOL_PREFACE },
      { type: 'tool_use', id: `toolu_${randomBytes(12).toString('hex')}`, name: tool.name, input },
    ];
    return { ...base, content, stop_reason: 'tool_use', usage: { ...usage, output_tokens: 12 } };
  }
  const fullText = toolResult ? `Tool said: ${textOf(toolResult.content)}` : mockAnthropicReply(textOf(last.content));
  const words = fullText.split(' ');
  const limit = json.max_tokens as number;
  const cut = limit < words.length;
  const text = cut ? words.slice(0, limit).join(' ') : fullText;
  return {
    ...base,
    content: [{ type: 'text', text }],
    stop_reason: cut ? 'max_tokens' : 'end_turn',
    usage: { ...usage, output_tokens: cut ? limit : words.length },
  };
}

/** A value for each property of the tool's schema, so tool calls carry arguments. */
function sampleInput(schema: unknown): Json {
  const properties = (schema as { properties?: Record<string, { type?: string }> } | undefined)?.properties ?? {};
  return Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [
      name,
      property.type === 'number' || property.type === 'integer'
        ? 1
        : property.type === 'boolean'
          ? true
          : 'San Francisco, CA',
    ]),
  );
}

function inputTokens(json: Json): number {
  const system = typeof json.system === 'string' ? json.system : textOf(json.system);
  const chars = ((json.messages as Json[] | undefined) ?? []).reduce<number>(
    (n, m) => n + textOf(m.content).length,
    system.length,
  );
  return Math.max(1, Math.ceil(chars / 4));
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: Json) =>
      block.type === 'text' && typeof block.text === 'string'
        ? block.text
        : block.type === 'tool_result'
          ? textOf(block.content)
          : '',
    )
    .join('');
}

// --- streaming -----------------------------------------------------------------------------

const frame = (event: string, data: Json) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;

/** The documented event flow for `message`, or its failure as `behaviour` says. */
function writeStream(res: ServerResponse, message: Json, behaviour: AnthropicBehaviour | null) {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': requestId(),
  });
  const usage = message.usage as Json;
  const content = message.content as Json[];
  res.write(
    frame('message_start', {
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    }),
  );
  let deltas = 0;
  const failing = behaviour?.kind === 'stream-error' || behaviour?.kind === 'truncate' ? behaviour : null;
  blocks: for (const [index, block] of content.entries()) {
    if (block.type === 'text') {
      res.write(frame('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      if (index === 0) res.write(frame('ping', {}));
      for (const piece of String(block.text).split(/(?= )/)) {
        if (failing && deltas === failing.afterDeltas) break blocks;
        res.write(frame('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }));
        deltas += 1;
      }
    } else {
      res.write(
        frame('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        }),
      );
      const json = JSON.stringify(block.input);
      const third = Math.ceil(json.length / 3);
      for (const piece of ['', json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)]) {
        res.write(frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }));
      }
    }
    res.write(frame('content_block_stop', { index }));
  }
  if (failing?.kind === 'stream-error') {
    res.end(
      frame('error', { error: { type: failing.type ?? 'overloaded_error', message: failing.message ?? 'Overloaded' } }),
    );
    return;
  }
  if (failing?.kind === 'truncate') {
    res.end();
    return;
  }
  res.write(
    frame('message_delta', {
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
  );
  res.end(frame('message_stop', {}));
}

// --- small pieces --------------------------------------------------------------------------

function sendJson(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'request-id': requestId(),
  });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, type: string, message: string) {
  const id = requestId();
  sendJson(res, status, { type: 'error', error: { type, message }, request_id: id });
}

const requestId = () => `req_${randomBytes(12).toString('hex')}`;

function parseObject(body: Buffer): Json | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : undefined;
  } catch {
    return undefined;
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
