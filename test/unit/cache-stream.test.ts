import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { createCacheCapture, replaySse } from '../../src/cache/index.js';
import { splitSseEvents } from '../../src/cache/sse-replay.js';

const chunk = (id: number, content: string) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const SSE = `${chunk(1, 'Hel')}${chunk(2, 'lo')}data: [DONE]\n\n`;

async function collect(stream: Readable): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const piece of stream) chunks.push(Buffer.from(piece as Buffer));
  return chunks;
}

describe('stream replay', () => {
  it('emits a cached SSE body event by event, byte for byte', async () => {
    const chunks = await collect(replaySse(Buffer.from(SSE)));
    expect(chunks.map(String)).toEqual([chunk(1, 'Hel'), chunk(2, 'lo'), 'data: [DONE]\n\n']);
    expect(Buffer.concat(chunks).toString()).toBe(SSE);
  });

  it('cuts at blank lines whatever the line ending, and keeps an unterminated tail', () => {
    const body = Buffer.from(': ping\r\n\r\nevent: a\rdata: 1\r\rdata: 2\ndata: 3\n\ndata: tail');
    expect(splitSseEvents(body).map(String)).toEqual([
      ': ping\r\n\r\n',
      'event: a\rdata: 1\r\r',
      'data: 2\ndata: 3\n\n',
      'data: tail',
    ]);
  });
});

describe('stream capture for the cache', () => {
  it('passes every chunk through and hands over the whole body at the end', async () => {
    let stored: Buffer | null | undefined;
    const capture = createCacheCapture({ maxBytes: 10_000, onComplete: (body) => (stored = body) });
    const received: Buffer[] = [];
    await pipeline(
      Readable.from([chunk(1, 'Hel'), chunk(2, 'lo'), 'data: [DONE]\n\n'].map((s) => Buffer.from(s))),
      capture,
      async function (source) {
        for await (const piece of source) received.push(piece as Buffer);
      },
    );
    expect(Buffer.concat(received).toString()).toBe(SSE);
    expect(stored?.toString()).toBe(SSE);
  });

  it('gives null past the size limit, and nothing for a stream that never ended', async () => {
    let big: Buffer | null | undefined;
    const capture = createCacheCapture({ maxBytes: 10, onComplete: (body) => (big = body) });
    await pipeline(Readable.from([Buffer.from(SSE)]), capture, async function (source) {
      for await (const _ of source);
    });
    expect(big).toBeNull();

    let called = false;
    const cut = createCacheCapture({ maxBytes: 10_000, onComplete: () => (called = true) });
    cut.write(Buffer.from(chunk(1, 'Hel')));
    cut.destroy();
    await new Promise((resolve) => cut.once('close', resolve));
    expect(called).toBe(false);
  });
});
