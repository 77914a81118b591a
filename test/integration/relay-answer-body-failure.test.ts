import { createServer, type ServerResponse } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway, viaAnthropic } from '../helpers/gateway.js';
import { listenOnLoopback } from '../helpers/loopback-server.js';

const ANSWER = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Hi' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 3, output_tokens: 1 },
};

type Failure = 'json-mid-body' | 'before-body' | 'stream-mid-event';

/** A provider whose next answer is a 200 that fails after its headers, then answers normally. */
async function failingProvider() {
  let next: Failure | null = null;
  const cut = (res: ServerResponse) => setTimeout(() => res.socket?.destroy(), 50);
  const server = createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      const failure = next;
      next = null;
      if (failure === 'json-mid-body') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"id":"msg_1","type":"message","content":[{"type":"te');
        cut(res);
      } else if (failure === 'before-body') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.flushHeaders();
        cut(res);
      } else if (failure === 'stream-mid-event') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","mo');
        cut(res);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ANSWER));
      }
    });
  });
  const loopback = await listenOnLoopback(server);
  onTestFinished(() => loopback.close());
  return { url: loopback.url, failNext: (failure: Failure) => void (next = failure) };
}

async function setup() {
  const g = await startGateway();
  const provider = await failingProvider();
  const messages = (stream = false) =>
    fetch(`${g.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: viaAnthropic(g, provider.url),
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 5,
        stream,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
      // The failure condition: the gateway neither ended nor aborted the answer.
      signal: AbortSignal.timeout(5000),
    });
  /** How the request settled: 'hung' only when the time-out above stopped it. */
  const settle = async (stream = false): Promise<string> => {
    try {
      const res = await messages(stream);
      await res.text();
      return `ended ${res.status}`;
    } catch (error) {
      return (error as Error).name === 'TimeoutError' ? 'hung' : 'failed';
    }
  };
  return { g, provider, messages, settle };
}

describe('a native answer whose body fails after its headers (relay-answer.ts)', () => {
  it.each<[Failure, boolean]>([
    ['json-mid-body', false],
    ['before-body', false],
    ['stream-mid-event', true],
  ])('ends the client request (%s), and the next request works', async (failure, stream) => {
    const { g, provider, messages, settle } = await setup();
    provider.failNext(failure);
    const outcome = await settle(stream);
    expect(outcome).not.toBe('hung');
    if (outcome.startsWith('ended')) expect(outcome).not.toBe('ended 200');

    const res = await messages();
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 'msg_1', usage: { input_tokens: 3, output_tokens: 1 } });

    const logs = await g.logs(2);
    expect(logs.find((l: any) => l.is_success === false)).toMatchObject({ error_code: 'UPSTREAM_STREAM_ERROR' });
    expect(g.logLines.filter((line) => /"level":50/.test(line))).toEqual([]);
  });
});
