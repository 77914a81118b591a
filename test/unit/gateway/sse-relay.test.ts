import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSseReader, MAX_SSE_EVENT_BYTES } from '../../../src/gateway/sse-reader.js';
import { holdDoneForVerdict, relaySse } from '../../../src/gateway/sse-relay.js';

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
    expect(String(reader.read(Buffer.from(text.slice(20))))).toBe(text);
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

describe("createSseReader: the provider's bytes", () => {
  const a = event({ choices: [{ delta: { content: 'a' } }], usage: null });
  const usageOnly = event({ choices: [], usage });
  const done = 'data: [DONE]\n\n';

  it('drops only the usage-only event of a chunk, keeping the other events byte for byte', () => {
    const reader = createSseReader({ dropUsageOnlyChunk: true, captureBytes: 1000 });
    expect(String(reader.read(Buffer.from(a + usageOnly + done)))).toBe(a + done);
    expect(reader.result.usage?.totalTokens).toBe(5);
    expect(reader.result.captured).toBe(a + done);
    // Two in one chunk, one of them first; a chunk of nothing else forwards nothing.
    const again = createSseReader({ dropUsageOnlyChunk: true, captureBytes: 0 });
    expect(String(again.read(Buffer.from(usageOnly + a + usageOnly + a)))).toBe(a + a);
    expect(again.read(Buffer.from(usageOnly))).toBeNull();
  });

  it('keeps a usage event that also carries choices, and forwards CRLF framing and comments unchanged', () => {
    const reader = createSseReader({ dropUsageOnlyChunk: true, captureBytes: 0 });
    const last = `: keep-alive\r\nevent: chunk\r\ndata: ${JSON.stringify({ choices: [{ delta: {} }], usage })}\r\n\r\n`;
    const text = `data: {"choices":[{"delta":{"content":"x"}}]}\r\n\r\n${last}data: [DONE]\r\n\r\n`;
    expect(String(reader.read(Buffer.from(text)))).toBe(text);
    expect(reader.result.usage?.totalTokens).toBe(5);
  });

  it('drops a CRLF-framed usage-only event whole', () => {
    const reader = createSseReader({ dropUsageOnlyChunk: true, captureBytes: 0 });
    const crlf = (s: string) => s.replace(/\n/g, '\r\n');
    expect(String(reader.read(Buffer.from(crlf(a + usageOnly + done))))).toBe(crlf(a + done));
    expect(reader.result.usage?.totalTokens).toBe(5);
  });

  it('finds event ends and usage cut at every byte between two or three chunks', () => {
    const bytes = Buffer.from(a + usageOnly + done);
    for (let i = 1; i < bytes.length; i += 7)
      for (const j of [i + 1, i + 2, i + 50]) {
        if (j >= bytes.length) continue;
        const reader = createSseReader({ dropUsageOnlyChunk: true, captureBytes: 0 });
        const parts = [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)];
        const out = parts.map((part) => reader.read(part)).filter((o) => o !== null);
        expect(reader.end()).toBeNull();
        expect(Buffer.concat(out).toString()).toBe(a + done);
        expect(reader.result.usage?.totalTokens).toBe(5);
      }
  });

  it('holds a partial event until its terminator, even one cut between chunks', () => {
    const reader = createSseReader({ dropUsageOnlyChunk: false, captureBytes: 0 });
    expect(reader.read(Buffer.from(a.slice(0, -1)))).toBeNull();
    expect(String(reader.read(Buffer.from('\n')))).toBe(a);
    expect(reader.read(Buffer.from('data: x\r'))).toBeNull();
    expect(reader.read(Buffer.from('\n'))).toBeNull();
    expect(reader.read(Buffer.from('\r'))).toBeNull();
    expect(String(reader.read(Buffer.from('\ndata: y')))).toBe('data: x\r\n\r\n');
    expect(reader.end()).toBe('data: y\n\n');
  });
});

/** A relay over a fresh provider stream, dropping the usage-only event, capturing nothing. */
function relayOfNewStream(eventTimeoutMs = 60_000) {
  const upstream = new PassThrough();
  const relay = relaySse(upstream, {
    dropUsageOnlyChunk: true,
    captureBytes: 0,
    onFirstChunk: () => undefined,
    eventTimeoutMs,
    response: null,
  });
  return { upstream, relay };
}

describe('relaySse: a stream that sends no event', () => {
  afterEach(() => void vi.useRealTimers());

  /** Feeds a comment every second for `seconds`; the failure the provider's stream ended with, if any. */
  async function comments(upstream: PassThrough, seconds: number, withData = false) {
    let failure: Error | null = null;
    upstream.once('error', (error) => (failure = error));
    for (let i = 0; i < seconds && !upstream.destroyed; i++) {
      upstream.write(withData && i % 3 === 0 ? 'data: {"choices":[]}\n\n' : ': keep-alive\n\n');
      await vi.advanceTimersByTimeAsync(1000);
    }
    return failure as Error | null;
  }

  it('is failed once comments alone have come for the event time-out', async () => {
    vi.useFakeTimers();
    const { upstream, relay } = relayOfNewStream(5_000);
    relay.stream.resume();
    const failure = await comments(upstream, 10);
    expect(failure).toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
    expect(failure?.message).toBe("The provider's stream sent no event within upstream_body_timeout_ms (5000 ms).");
  });

  it('lives on while events come, however many comments come between them', async () => {
    vi.useFakeTimers();
    const { upstream, relay } = relayOfNewStream(5_000);
    relay.stream.resume();
    expect(await comments(upstream, 30, true)).toBeNull();
    expect(upstream.destroyed).toBe(false);
  });

  it('does not count the time the client holds the stream paused', async () => {
    vi.useFakeTimers();
    const { upstream } = relayOfNewStream(5_000);
    upstream.pause(); // what the relay does when the client does not keep up
    await vi.advanceTimersByTimeAsync(60_000);
    expect(upstream.destroyed).toBe(false);
  });
});

describe('relaySse', () => {
  it('sends what arrives in one turn as one chunk, byte for byte, and ends after the last event', async () => {
    const { upstream, relay } = relayOfNewStream();
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

  it('pauses the provider while the client does not read, and goes on when it does', async () => {
    const { upstream, relay } = relayOfNewStream();
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const one = event({ choices: [{ delta: { content: 'x'.repeat(1000) } }] });
    let written = 0;
    while (upstream.write(one)) {
      written++;
      await turn();
      if (written > 1000) break;
    }
    // The client's side holds about its high-water mark, the provider's side its own: no more.
    expect(written).toBeLessThan(200);
    expect(upstream.isPaused()).toBe(true);
    expect(relay.stream.readableLength).toBeLessThan(64 * 1024);
    const chunks: Buffer[] = [];
    relay.stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => relay.stream.once('end', resolve));
    upstream.end('data: [DONE]\n\n');
    await ended;
    expect(Buffer.concat(chunks).toString()).toBe(`${one.repeat(written + 1)}data: [DONE]\n\n`);
  });

  it('ends with an error event, not a broken half event, when the provider fails', async () => {
    const { upstream, relay } = relayOfNewStream();
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

describe('relaySse: a verdict event before the end marker (holdDoneForVerdict)', () => {
  const verdict = 'data: {"hook_results":{"before_request_hooks":[],"after_request_hooks":[]}}\n\n';

  async function relayed(write: (upstream: PassThrough) => Promise<void> | void) {
    const { upstream, relay } = relayOfNewStream();
    const asked = holdDoneForVerdict(relay.stream, () => verdict);
    const chunks: Buffer[] = [];
    relay.stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => relay.stream.once('end', resolve));
    await write(upstream);
    await ended;
    return { asked, text: Buffer.concat(chunks).toString() };
  }

  it('sends the verdict just before [DONE], the other events byte for byte, whether [DONE] comes alone or with them', async () => {
    const a = event({ choices: [{ delta: { content: 'say [DONE] twice' } }] });
    const b = 'data: {"choices":[{"delta":{"content":"b"}}]}\r\n\r\n';
    const together = await relayed((upstream) => void upstream.end(`${a}${b}data: [DONE]\r\n\r\n`));
    expect(together).toEqual({ asked: true, text: `${a}${b}${verdict}data: [DONE]\r\n\r\n` });
    const alone = await relayed(async (upstream) => {
      upstream.write(a);
      await new Promise((resolve) => setImmediate(resolve));
      upstream.write('data: [DONE]\n\n');
      await new Promise((resolve) => setImmediate(resolve));
      upstream.end();
    });
    expect(alone.text).toBe(`${a}${verdict}data: [DONE]\n\n`);
  });

  it('sends the verdict last when the stream has no [DONE], and before an unterminated one', async () => {
    const a = event({ choices: [{ delta: { content: 'a' } }] });
    expect((await relayed((upstream) => void upstream.end(a))).text).toBe(`${a}${verdict}`);
    expect((await relayed((upstream) => void upstream.end(`${a}data: [DONE]`))).text).toBe(
      `${a}${verdict}data: [DONE]\n\n`,
    );
  });

  it('refuses once the relay has read from the provider, and refuses a stream that is not a relay', async () => {
    const { upstream, relay } = relayOfNewStream();
    upstream.write(event({ choices: [{ delta: { content: 'a' } }] }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(holdDoneForVerdict(relay.stream, () => verdict)).toBe(false);
    expect(holdDoneForVerdict(new PassThrough(), () => verdict)).toBe(false);
    upstream.destroy();
  });
});

describe('an event larger than the bound', () => {
  const huge = () => Buffer.alloc(MAX_SSE_EVENT_BYTES + 1, 'a');

  it('is dropped by the reader, which goes on after its end', () => {
    const reader = createSseReader({ dropUsageOnlyChunk: false, captureBytes: 0 });
    const before = Buffer.from(event({ choices: [{ delta: { content: 'a' } }] }));
    expect(reader.read(Buffer.concat([before, Buffer.from('data: ')]))).toEqual(before);
    expect(reader.read(huge())).toBeNull();
    expect(reader.overflowed).toBe(true);
    // The rest of the big event, its end cut between two chunks, then a whole event with usage.
    expect(reader.read(Buffer.from('aaaa\n'))).toBeNull();
    const after = event({ choices: [], usage });
    expect(String(reader.read(Buffer.from(`\n${after}`)))).toBe(after);
    expect(reader.result.usage?.totalTokens).toBe(5);
    expect(reader.end()).toBeNull();
  });

  it('fails the relayed stream with an error event after the events before it, and stops reading', async () => {
    const { upstream, relay } = relayOfNewStream();
    // As the gateway's relay does: a provider error ends the client's stream with an error event.
    upstream.on('error', (error) =>
      relay.fail({ message: `The provider's stream failed: ${error.message}`, type: 'api_error', code: 'X' }),
    );
    const chunks: Buffer[] = [];
    relay.stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => relay.stream.once('end', resolve));
    const first = event({ choices: [{ delta: { content: 'a' } }] });
    upstream.write(`${first}data: `);
    upstream.write(huge());
    await ended;
    const text = Buffer.concat(chunks).toString();
    expect(text.startsWith(first)).toBe(true);
    expect(text).toContain('larger than 16777216 bytes');
    expect(text).not.toContain('aaaa');
    expect(upstream.destroyed).toBe(true);
  });
});
