import { beforeAll, describe, expect, it } from 'vitest';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { createSseParser } from '../../src/providers/adapters/anthropic/sse-parser.js';
import { createConverseStreamTranslator } from '../../src/providers/adapters/bedrock/chat-stream.js';
import { translateBedrockError } from '../../src/providers/adapters/bedrock/errors.js';
import { EventStreamReader, loadEventStreamCodec } from '../../src/providers/adapters/bedrock/event-stream.js';
import { createChatStreamTranslator as cohereStream } from '../../src/providers/adapters/cohere/chat-stream.js';
import { createChatStreamTranslator as googleStream } from '../../src/providers/adapters/google/chat-stream.js';
import type { StreamContext, StreamTranslator } from '../../src/providers/adapters/types.js';
import { seededRandom } from '../../scripts/bench/seeded-random.js';

// The stream readers must give the same events however the bytes are cut, and read one large
// event cut into many chunks in time linear in its size: the 16 MiB cases below took seconds
// to minutes when each chunk re-scanned (or re-copied) everything held so far.

const MIB = 1024 * 1024;
const CHUNK = 16 * 1024;
const EOLS = { LF: '\n', CRLF: '\r\n', CR: '\r' } as const;
const ctx: StreamContext = { model: 'm', includeUsage: true, id: 'chatcmpl-c', created: 1_700_000_000 };

/** `bytes` cut every `size` bytes. */
function everyN(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

/** `bytes` cut at random places (pieces of 0 to 40 bytes, the empty ones included). */
function randomCuts(bytes: Buffer, seed: number): Buffer[] {
  const random = seededRandom(seed);
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length;) {
    const size = Math.floor(random() * 41);
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

/** Every way of cutting a test stream: whole, byte by byte, in 2, 3 and 7 bytes, and at random. */
function cuttings(bytes: Buffer): [string, Buffer[]][] {
  return [
    ['whole', [bytes]],
    ['byte by byte', everyN(bytes, 1)],
    ['2 bytes', everyN(bytes, 2)],
    ['3 bytes', everyN(bytes, 3)],
    ['7 bytes', everyN(bytes, 7)],
    ...[1, 2, 3, 4, 5].map((seed): [string, Buffer[]] => [`random (seed ${seed})`, randomCuts(bytes, seed)]),
  ];
}

function translate(translator: StreamTranslator, pieces: Buffer[]): string[] {
  return [...pieces.flatMap((piece) => translator.push(piece)), ...translator.end()];
}

/** The JSON of each translated event, '[DONE]' as such. */
const payloads = (events: string[]) =>
  events.map((event) => (event === 'data: [DONE]\n\n' ? '[DONE]' : JSON.parse(event.slice('data: '.length))));

/** The `content` of the chunks, joined. */
const content = (events: string[]) =>
  payloads(events)
    .map((chunk: any) => (chunk === '[DONE]' ? '' : (chunk.choices?.[0]?.delta?.content ?? '')))
    .join('');

describe('anthropic SSE parser: chunk boundaries', () => {
  const lines = [
    ': a comment before the first event',
    '',
    'event: message_start',
    'data: {"type":"message_start"}',
    '',
    'event: content_block_delta',
    'data: {"text":"Grüße 👋',
    'data: 日本語"}',
    'id: 7',
    '',
    '',
    'data:no space',
    '',
    'event: message_stop',
    'data: {"type":"message_stop"}',
  ];
  const expected = [
    { event: 'message_start', data: '{"type":"message_start"}' },
    { event: 'content_block_delta', data: '{"text":"Grüße 👋\n日本語"}' },
    { event: '', data: 'no space' },
    { event: 'message_stop', data: '{"type":"message_stop"}' },
  ];
  const parse = (pieces: Buffer[]) => {
    const parser = createSseParser();
    return [...pieces.flatMap((piece) => parser.push(piece)), ...parser.end()];
  };

  for (const [name, eol] of Object.entries(EOLS)) {
    for (const ending of ['', eol, eol + eol]) {
      const text = lines.join(eol) + ending;
      it(`gives the same events however a ${name} stream is cut (${JSON.stringify(ending)} at its end)`, () => {
        for (const [how, pieces] of cuttings(Buffer.from(text))) expect(parse(pieces), how).toEqual(expected);
      });
    }
  }

  it('reads one 16 MiB event delivered in 16 KB chunks', () => {
    const big = `${'é'.repeat(MIB)}${'x'.repeat(14 * MIB)}`;
    const text = `event: content_block_delta\r\ndata: ${big}\r\ndata: end\r\n\r\nevent: message_stop\r\ndata: {}\r\n\r\n`;
    const events = parse(everyN(Buffer.from(text), CHUNK));
    expect(events.map((event) => event.event)).toEqual(['content_block_delta', 'message_stop']);
    expect(events[0]!.data.length).toBe(big.length + '\nend'.length);
    expect(events[0]!.data === `${big}\nend`).toBe(true);
  });
});

describe('google stream translator: chunk boundaries', () => {
  const event = (value: unknown) => `data: ${JSON.stringify(value)}`;
  const stream = (eol: string, ending: string) =>
    [
      ': a comment',
      '',
      event({ candidates: [{ content: { parts: [{ text: 'Grüße 👋 ' }], role: 'model' }, index: 0 }] }),
      '',
      // One response whose JSON is cut over two data: lines.
      'data: {"candidates": [{"content": {"parts": [{"text": "日本語"}],',
      'data: "role": "model"}, "index": 0}]}',
      '',
      '',
      event({
        candidates: [{ content: { parts: [{ text: '!' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 },
      }),
    ].join(eol) + ending;

  for (const [name, eol] of Object.entries(EOLS)) {
    for (const ending of ['', eol, eol + eol]) {
      it(`gives the same chunks however a ${name} stream is cut (${JSON.stringify(ending)} at its end)`, () => {
        const bytes = Buffer.from(stream(eol, ending));
        const whole = translate(googleStream(ctx), [bytes]);
        expect(content(whole)).toBe('Grüße 👋 日本語!');
        expect(payloads(whole).at(-2)).toMatchObject({ usage: { total_tokens: 7 } });
        expect(payloads(whole).at(-1)).toBe('[DONE]');
        for (const [how, pieces] of cuttings(bytes)) expect(translate(googleStream(ctx), pieces), how).toEqual(whole);
      });
    }
  }

  it('reads one 16 MiB event delivered in 16 KB chunks', () => {
    const big = `${'ü'.repeat(MIB)}${'x'.repeat(14 * MIB)}`;
    const text = `${event({ candidates: [{ content: { parts: [{ text: big }], role: 'model' }, finishReason: 'STOP', index: 0 }] })}\r\n\r\n`;
    const events = translate(googleStream(ctx), everyN(Buffer.from(text), CHUNK));
    expect(content(events) === big).toBe(true);
    expect(payloads(events).at(-1)).toBe('[DONE]');
  });
});

describe('cohere stream translator: chunk boundaries', () => {
  const event = (type: string, body: Record<string, unknown> = {}, eol = '\n') =>
    `event: ${type}${eol}data: ${JSON.stringify({ type, ...body })}`;
  const text = (value: string) => ({ index: 0, delta: { message: { content: { text: value } } } });
  const stream = (eol: string, ending: string) =>
    [
      event('message-start', { id: 'm1', delta: { message: { role: 'assistant' } } }, eol),
      '',
      ': a comment',
      '',
      event('content-delta', text('Grüße 👋 '), eol),
      '',
      // One event whose JSON is cut over two data: lines.
      'event: content-delta',
      'data: {"type": "content-delta", "index": 0,',
      'data: "delta": {"message": {"content": {"text": "日本語"}}}}',
      '',
      '',
      event('message-end', { delta: { finish_reason: 'COMPLETE', usage: { tokens: { input_tokens: 3 } } } }, eol),
    ].join(eol) + ending;

  for (const [name, eol] of Object.entries(EOLS)) {
    for (const ending of ['', eol, eol + eol]) {
      it(`gives the same chunks however a ${name} stream is cut (${JSON.stringify(ending)} at its end)`, () => {
        const bytes = Buffer.from(stream(eol, ending));
        const whole = translate(cohereStream(ctx), [bytes]);
        expect(content(whole)).toBe('Grüße 👋 日本語');
        expect(payloads(whole).at(-1)).toBe('[DONE]');
        for (const [how, pieces] of cuttings(bytes)) expect(translate(cohereStream(ctx), pieces), how).toEqual(whole);
      });
    }
  }

  it('keeps the data: lines of one event together when the CRLF between them is cut', () => {
    const bytes = Buffer.from(stream('\r\n', ''));
    const at = bytes.indexOf('"index": 0,\r\n') + '"index": 0,\r'.length;
    const whole = translate(cohereStream(ctx), [bytes]);
    expect(translate(cohereStream(ctx), [bytes.subarray(0, at), bytes.subarray(at)])).toEqual(whole);
  });

  it('reads one 16 MiB event delivered in 16 KB chunks', () => {
    const big = `${'ö'.repeat(MIB)}${'x'.repeat(14 * MIB)}`;
    const raw = `${[event('content-delta', text(big), '\r\n'), event('message-end', {}, '\r\n')].join('\r\n\r\n')}\r\n\r\n`;
    const events = translate(cohereStream(ctx), everyN(Buffer.from(raw), CHUNK));
    expect(content(events) === big).toBe(true);
    expect(payloads(events).at(-1)).toBe('[DONE]');
  });
});

describe('bedrock event-stream reader: chunk boundaries', () => {
  beforeAll(loadEventStreamCodec);
  const codec = new EventStreamCodec(
    (b) => Buffer.from(b).toString('utf8'),
    (s) => new Uint8Array(Buffer.from(s, 'utf8')),
  );
  const frame = (type: string, payload: unknown) =>
    Buffer.from(
      codec.encode({
        headers: {
          ':event-type': { type: 'string', value: type },
          ':content-type': { type: 'string', value: 'application/json' },
          ':message-type': { type: 'string', value: 'event' },
        },
        body: new Uint8Array(Buffer.from(JSON.stringify(payload))),
      }),
    );
  const delta = (text: string) => frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text } });
  const stream = Buffer.concat([
    frame('messageStart', { role: 'assistant' }),
    delta('Grüße 👋 '),
    delta('日本語'),
    frame('contentBlockStop', { contentBlockIndex: 0 }),
    frame('messageStop', { stopReason: 'end_turn' }),
    frame('metadata', { usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 } }),
  ]);

  it('gives the same messages and chunks however the frames are cut', () => {
    const read = (pieces: Buffer[]) => {
      const reader = new EventStreamReader();
      const messages = pieces.flatMap((piece) => reader.push(piece));
      return { messages, leftover: reader.leftover };
    };
    const whole = read([stream]);
    expect(whole.messages.map((m) => m.headers[':event-type'])).toEqual([
      'messageStart',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockStop',
      'messageStop',
      'metadata',
    ]);
    expect(whole.leftover).toBe(0);
    const chunks = translate(createConverseStreamTranslator(ctx), [stream]);
    expect(content(chunks)).toBe('Grüße 👋 日本語');
    expect(payloads(chunks).at(-1)).toBe('[DONE]');
    for (const [how, pieces] of cuttings(stream)) {
      expect(read(pieces), how).toEqual(whole);
      expect(translate(createConverseStreamTranslator(ctx), pieces), how).toEqual(chunks);
    }
  });

  it('counts the bytes of a frame cut short, and refuses a bad length whatever the cut', () => {
    const reader = new EventStreamReader();
    for (const piece of everyN(stream.subarray(0, stream.length - 5), 3)) reader.push(piece);
    const last = frame('metadata', { usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 } });
    expect(reader.leftover).toBe(last.length - 5);
    const bad = Buffer.from([0, 0, 0, 3, 1, 2, 3, 4]);
    const cutReader = new EventStreamReader();
    expect(cutReader.push(bad.subarray(0, 2))).toEqual([]);
    expect(() => cutReader.push(bad.subarray(2))).toThrow(/invalid event-stream frame length 3/);
  });

  it('reads one frame of almost 16 MiB delivered in 16 KB chunks', () => {
    const big = `${'ß'.repeat(MIB)}${'x'.repeat(14 * MIB - 4096)}`;
    const bytes = Buffer.concat([frame('messageStart', { role: 'assistant' }), delta(big), frame('messageStop', {})]);
    const events = translate(createConverseStreamTranslator(ctx), everyN(bytes, CHUNK));
    expect(content(events) === big).toBe(true);
    expect(payloads(events).at(-1)).toBe('[DONE]');
  });
});

describe('bedrock error message: canonical request cut', () => {
  const error = (message: string) => translateBedrockError(403, Buffer.from(JSON.stringify({ message })));
  const whitespace = ' \n\t\r'.repeat(MIB / 4);

  it('cuts at the canonical request after 1 MiB of whitespace, the whitespace with it', () => {
    const message = `Signature mismatch.${whitespace}The Canonical String for this request should have been\n'POST\nx-amz-security-token:SECRET'`;
    expect(error(message).message).toBe('Signature mismatch.');
  });

  it('keeps a message with 1 MiB of whitespace and no canonical request, trimmed and capped', () => {
    expect(error(`Too slow.${whitespace}then more`).message).toBe(`Too slow.${whitespace}`.slice(0, 2000));
    expect(error(`${whitespace}Only this.${whitespace}`).message).toBe('Only this.');
  });
});
