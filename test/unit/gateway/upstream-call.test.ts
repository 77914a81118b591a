import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { callAborted, type ReadPlan } from '../../../src/gateway/upstream-call.js';
import { createUpstreamClient, type UpstreamClient } from '../../../src/gateway/upstream-client.js';

const SETTINGS = { connectTimeoutMs: 5_000, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000 };
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A provider on 127.0.0.1 answering with `handler`; each request's close is reported on `closed`. */
async function provider(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const closed: Array<Promise<void>> = [];
  const server: Server = createServer((req, res) => {
    closed.push(new Promise((resolve) => res.once('close', () => resolve())));
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client: UpstreamClient = createUpstreamClient(SETTINGS);
  cleanups.push(
    () => new Promise((resolve) => server.close(resolve)),
    () => client.close(),
  );
  server.on('connection', (socket) => cleanups.unshift(async () => socket.destroy()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions?x=1`;
  const start = (plan: ReadPlan, body: Buffer | Readable | null = Buffer.from('{"a":1}')) =>
    client.call({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body }, () => plan);
  return { start, closed };
}

const whole: ReadPlan = { keep: Infinity };

async function readAll(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('upstream call', () => {
  it('reads a JSON answer whole, with its status and headers (repeated ones as a list), and sends the body and path as given', async () => {
    let seen = '';
    const { start } = await provider((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      req.on('end', () => {
        seen = `${req.method} ${req.url} ${text}`;
        res.setHeader('set-cookie', ['a=1', 'b=2']);
        res.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'r1' });
        res.write('{"id":');
        setTimeout(() => res.end('"x"}'), 5);
      });
    });
    const answer = await start(whole).answer;
    expect(seen).toBe('POST /v1/chat/completions?x=1 {"a":1}');
    expect(answer.statusCode).toBe(201);
    expect(answer.headers['x-request-id']).toBe('r1');
    expect(answer.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(answer.body).toBeNull();
    expect(answer.bytes?.toString('utf8')).toBe('{"id":"x"}');
  });

  it('keeps at most `keep` bytes of a body and stops the call there', async () => {
    const { start, closed } = await provider((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.write('0123456789');
      res.write('abcdefghij'); // never ends: only stopping the call closes it
    });
    const answer = await start({ keep: 15 }).answer;
    expect(answer.statusCode).toBe(500);
    expect(answer.bytes?.toString('utf8')).toBe('0123456789abcde');
    await closed[0];
  });

  it('hands a stream back once its first bytes are in, then relays the rest as it comes', async () => {
    let finish: () => void = () => undefined;
    const { start } = await provider((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      setTimeout(() => {
        res.write('data: 1\n\n');
        finish = () => res.end('data: [DONE]\n\n');
      }, 5);
    });
    const answer = await start('first-bytes').answer;
    expect(answer.bytes).toBeNull();
    expect(answer.body?.readableLength).toBeGreaterThan(0);
    const text = readAll(answer.body!);
    finish();
    expect(await text).toBe('data: 1\n\ndata: [DONE]\n\n');
  });

  it('hands a body back at its headers on the "headers" plan', async () => {
    let finish: () => void = () => undefined;
    const { start } = await provider((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.flushHeaders();
      finish = () => res.end('bytes');
    });
    const answer = await start('headers').answer;
    expect(answer.body?.readableLength).toBe(0);
    const text = readAll(answer.body!);
    finish();
    expect(await text).toBe('bytes');
  });

  it('rejects with the reason when stopped before the answer, and closes the connection', async () => {
    const { start, closed } = await provider(() => undefined); // never answers
    const call = start(whole);
    while (closed.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    const reason = callAborted();
    call.abort(reason);
    await expect(call.answer).rejects.toBe(reason);
    await closed[0];
  });

  it('rejects at once when stopped before it was sent, and never sends it', async () => {
    let requests = 0;
    const { start } = await provider((_req, res) => {
      requests++;
      res.end('{}');
    });
    const call = start(whole);
    call.abort(callAborted());
    await expect(call.answer).rejects.toMatchObject({ name: 'AbortError' });
    await start(whole).answer; // the same connection pool still works
    expect(requests).toBe(1);
  });

  it('fails a streaming body with the reason when stopped mid-stream, and closes the connection', async () => {
    const { start, closed } = await provider((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n'); // never ends
    });
    const call = start('first-bytes');
    const answer = await call.answer;
    const failed = new Promise<Error>((resolve) => answer.body!.once('error', resolve));
    answer.body!.resume();
    const reason = callAborted();
    call.abort(reason);
    expect(await failed).toBe(reason);
    await closed[0];
  });

  it('closes the connection when a streaming body is dropped unread', async () => {
    const { start, closed } = await provider((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
    });
    const answer = await start('first-bytes').answer;
    answer.body!.destroy();
    await closed[0];
  });

  it('reports a provider that cannot be reached, and destroys a request body streamed through', async () => {
    const client = createUpstreamClient(SETTINGS);
    cleanups.push(() => client.close());
    const body = new Readable({ read: () => undefined });
    const call = client.call(
      { url: 'http://127.0.0.1:1/v1/files', method: 'POST', headers: {}, body },
      () => 'headers',
    );
    await expect(call.answer).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(body.destroyed).toBe(true);
    await expect(
      client.call({ url: 'ftp://127.0.0.1/x', method: 'GET', headers: {}, body: null }, () => whole).answer,
    ).rejects.toMatchObject({ code: 'UND_ERR_INVALID_ARG' });
  });
});
