import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createSseReader, relaySse } from '../../../src/gateway/sse-relay.js';

const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };

describe('createSseReader', () => {
  it('forwards chunks without a usage object as the same Buffer, and reads usage written with spaces', () => {
    const reader = createSseReader({ dropUsageOnlyChunk: true, captureBytes: 0 });
    const plain = Buffer.from(event({ model: 'm-1', choices: [{ delta: { content: 'hi' } }], usage: null }));
    expect(reader.read(plain)).toBe(plain);
    expect(reader.result.model).toBe('m-1');
    const spaced = Buffer.from(
      'data: {"choices": [], "usage" :  {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}\n\n',
    );
    expect(reader.read(spaced)).toBeNull(); // the usage-only chunk the client did not ask for
    expect(reader.result.usage?.totalTokens).toBe(5);
  });

  it('keeps the usage-only chunk for a client that asked, and joins events split across chunks', () => {
    const reader = createSseReader({ dropUsageOnlyChunk: false, captureBytes: 1000 });
    const text = event({ choices: [], usage });
    expect(reader.read(Buffer.from(text.slice(0, 20)))).toBeNull();
    expect(reader.read(Buffer.from(text.slice(20)))).toBe(text);
    expect(reader.result.usage?.totalTokens).toBe(5);
    expect(reader.result.captured).toBe(text);
  });
});

describe('createSseReader: characters cut at a chunk edge', () => {
  it('forwards, captures and reads a character split between two chunks whole', () => {
    const reader = createSseReader({ dropUsageOnlyChunk: true, captureBytes: 1000 });
    const text = event({ choices: [{ delta: { content: 'café 😀' } }], usage });
    const bytes = Buffer.from(text);
    const forwarded: string[] = [];
    // Every cut inside the two multibyte characters (é: 2 bytes, the emoji: 4).
    for (const at of [bytes.indexOf('é') + 1, bytes.indexOf('😀') + 1, bytes.indexOf('😀') + 3]) {
      const again = createSseReader({ dropUsageOnlyChunk: true, captureBytes: 1000 });
      const out = [again.read(bytes.subarray(0, at)), again.read(bytes.subarray(at))].filter((o) => o !== null);
      expect(out.map(String).join('')).toBe(text);
      expect(again.result.captured).toBe(text);
      expect(again.result.usage?.totalTokens).toBe(5);
    }
    // An unterminated last event with a cut character, ended by the stream's end.
    const last = Buffer.from('data: {"choices":[{"delta":{"content":"ü"}}]}');
    const cut = last.indexOf('ü') + 1;
    forwarded.push(String(reader.read(last.subarray(0, cut)) ?? ''), String(reader.read(last.subarray(cut)) ?? ''));
    forwarded.push(reader.end() ?? '');
    expect(forwarded.join('')).toBe(`${last.toString()}\n\n`);
  });
});

describe('relaySse', () => {
  it('sends what arrives in one turn as one chunk, byte for byte, and ends after the last event', async () => {
    const upstream = new PassThrough();
    const relay = relaySse(upstream, {
      dropUsageOnlyChunk: true,
      captureBytes: 0,
      onFirstChunk: () => undefined,
      response: null,
    });
    const chunks: Buffer[] = [];
    relay.stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => relay.stream.once('end', resolve));
    const a = event({ model: 'm-2', choices: [{ delta: { content: 'a' } }] });
    const b = event({ choices: [{ delta: { content: 'b' } }] });
    upstream.write(a);
    upstream.write(b);
    upstream.write(event({ choices: [], usage }));
    upstream.end('data: [DONE]\n\n');
    await ended;
    expect(Buffer.concat(chunks).toString()).toBe(`${a}${b}data: [DONE]\n\n`);
    expect(chunks.length).toBeLessThan(4);
    expect(relay.result).toMatchObject({ model: 'm-2', usage: { totalTokens: 5 } });
  });

  it('ends with an error event, not a broken half event, when the provider fails', async () => {
    const upstream = new PassThrough();
    const relay = relaySse(upstream, {
      dropUsageOnlyChunk: true,
      captureBytes: 0,
      onFirstChunk: () => undefined,
      response: null,
    });
    const chunks: Buffer[] = [];
    relay.stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => relay.stream.once('end', resolve));
    const a = event({ choices: [{ delta: { content: 'a' } }] });
    upstream.write(a + 'data: {"cho');
    await new Promise((resolve) => setImmediate(resolve));
    relay.fail({ message: 'boom', type: 'api_error', code: 'UPSTREAM_STREAM_ERROR' });
    await ended;
    expect(Buffer.concat(chunks).toString()).toBe(
      `${a}data: {"error":{"message":"boom","type":"api_error","code":"UPSTREAM_STREAM_ERROR","param":null}}\n\n`,
    );
  });
});
