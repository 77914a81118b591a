import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway, viaAnthropic } from '../helpers/gateway.js';
import { listenOnLoopback } from '../helpers/loopback-server.js';

const DELTA_TEXT = 'x'.repeat(200);
const DELTAS = 200_000; // ~60 MB of Anthropic events, ~70 MB once translated to chat chunks

const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const DELTA = event('content_block_delta', {
  type: 'content_block_delta',
  index: 0,
  delta: { type: 'text_delta', text: DELTA_TEXT },
});

/** Writes an Anthropic stream of DELTAS text deltas, as fast as the socket takes it, counting what it wrote. */
async function flood(res: ServerResponse, sent: { bytes: number; done: boolean }) {
  const write = async (text: string) => {
    sent.bytes += text.length;
    if (!res.write(text)) await new Promise((resolve) => res.once('drain', resolve));
  };
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [] };
  await write(event('message_start', { type: 'message_start', message: { ...message, usage: { input_tokens: 3 } } }));
  const block = { type: 'text', text: '' };
  await write(event('content_block_start', { type: 'content_block_start', index: 0, content_block: block }));
  for (let i = 0; i < DELTAS; i++) {
    if (res.destroyed) return;
    await write(DELTA);
  }
  await write(event('content_block_stop', { type: 'content_block_stop', index: 0 }));
  const usage = { output_tokens: DELTAS };
  await write(event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage }));
  await write(event('message_stop', { type: 'message_stop' }));
  sent.done = true;
  res.end();
}

async function floodingAnthropic() {
  const sent = { bytes: 0, done: false };
  const server = createServer((req, res) => {
    req.resume();
    req.once('end', () => void flood(res, sent));
  });
  const loopback = await listenOnLoopback(server);
  onTestFinished(() => loopback.close());
  return { url: loopback.url, sent };
}

/** Waits until `read()` has stopped changing for a while (or `until` holds): what a stalled writer looks like. */
async function settled(read: () => number, until: () => boolean): Promise<number> {
  let last = -1;
  let still = 0;
  while (still < 6 && !until()) {
    await sleep(250);
    const now = read();
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return read();
}

describe('an Anthropic stream translated to chat completions, for a client that reads slowly', () => {
  it('reads the provider no further ahead than the buffers between them, then delivers every chunk', async () => {
    const g = await startGateway();
    const provider = await floodingAnthropic();
    const body = JSON.stringify({
      model: 'claude-sonnet-4-5',
      stream: true,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(`${g.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: viaAnthropic(g, provider.url),
      });
      req.once('response', resolve);
      req.once('error', reject);
      req.end(body);
    });
    onTestFinished(() => void res.destroy());
    expect(res.statusCode).toBe(200);
    res.pause(); // the slow client: reads nothing for now

    const total = DELTAS * DELTA.length;
    const readAhead = await settled(
      () => provider.sent.bytes,
      () => provider.sent.done,
    );
    // Loopback sockets and stream buffers hold some megabytes; a relay without backpressure reads it all.
    expect(provider.sent.done).toBe(false);
    expect(readAhead).toBeLessThan(total / 2);

    res.setEncoding('utf8');
    let text = 0;
    let done = false;
    let tail = '';
    for await (const chunk of res) {
      const lines = (tail + (chunk as string)).split('\n');
      tail = lines.pop()!;
      for (const line of lines) {
        if (line === 'data: [DONE]') done = true;
        else if (line.startsWith('data: '))
          text += (JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? '').length;
      }
    }
    expect(done).toBe(true);
    expect(text).toBe(DELTAS * DELTA_TEXT.length);
    expect(provider.sent.done).toBe(true);
  }, 60_000);
});
