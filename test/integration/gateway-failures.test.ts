import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway, viaAnthropic } from '../helpers/gateway.js';
import { listenOnLoopback } from '../helpers/loopback-server.js';

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('gateway: upstream failures', () => {
  it('keeps the provider’s status and message on a unified route, in the common error body', async () => {
    const g = await startGateway();
    g.mock.behave({
      kind: 'error',
      status: 500,
      body: {
        error: {
          message: 'The server had an error processing your request.',
          type: 'server_error',
          param: null,
          code: null,
        },
      },
    });
    const failure = await g
      .openai()
      .chat.completions.create(chat as any)
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.InternalServerError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect((failure as InstanceType<typeof OpenAI.APIError>).message).toMatch(
      /The server had an error processing your request/,
    );

    g.mock.behave({ kind: 'error', status: 429 });
    const limited = await g.admin.post('/v1/chat/completions', chat, g.viaMock);
    expect(limited.status).toBe(429);
    expect(Object.keys(limited.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(limited.body.error.code).toBe('rate_limit_exceeded');

    g.mock.behave({
      kind: 'raw',
      status: 503,
      headers: { 'content-type': 'text/html' },
      body: Buffer.from('<h1>down</h1>'),
    });
    const html = await g.admin.post('/v1/chat/completions', chat, g.viaMock);
    expect(html.status).toBe(503);
    expect(html.body.error).toMatchObject({ message: '<h1>down</h1>', code: 'UPSTREAM_ERROR' });

    const logs = await g.logs(3);
    expect(logs.map((l: any) => [l.status_code, l.error_code])).toEqual([
      [503, 'UPSTREAM_ERROR'],
      [429, 'UPSTREAM_ERROR'],
      [500, 'UPSTREAM_ERROR'],
    ]);
  });

  it('answers 502 for a dead provider and 504 for one that does not answer in time', async () => {
    const g = await startGateway({ env: { SVCGW_UPSTREAM_HEADERS_TIMEOUT_MS: '300' } });
    const port = await closedPort();
    const dead = await g.admin.post('/v1/chat/completions', chat, {
      ...g.viaMock,
      'x-service-custom-host': `http://127.0.0.1:${port}/v1`,
    });
    expect(dead.status).toBe(502);
    expect(dead.body.error.code).toBe('UPSTREAM_UNREACHABLE');
    expect(dead.body.error.message).toMatch(/ECONNREFUSED/);

    g.mock.behave({ kind: 'delay', ms: 5000 });
    const slow = await g.admin.post('/v1/chat/completions', chat, g.viaMock);
    expect(slow.status).toBe(504);
    expect(slow.body.error.code).toBe('UPSTREAM_TIMEOUT');

    g.mock.behave({ kind: 'destroy' });
    const reset = await g.admin.post('/v1/chat/completions', chat, g.viaMock);
    expect(reset.status).toBe(502);

    const logs = await g.logs(3);
    expect(logs.map((l: any) => [l.status_code, l.error_code])).toEqual([
      [502, 'UPSTREAM_UNREACHABLE'],
      [504, 'UPSTREAM_TIMEOUT'],
      [502, 'UPSTREAM_UNREACHABLE'],
    ]);
  });

  it('aborts the upstream request when the client disconnects mid-stream, and logs it', async () => {
    const g = await startGateway();
    g.mock.behave({ kind: 'stream-then-hang', chunks: 2 });
    const controller = new AbortController();
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-service-api-key': g.adminKey, 'content-type': 'application/json', ...g.viaMock },
      body: JSON.stringify({ ...chat, stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value).toString()).toContain('chat.completion.chunk');
    controller.abort();
    await g.mock.waitForAborted(1);
    expect(g.mock.aborted).toBe(1);
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ status_code: 499, error_code: 'CLIENT_CLOSED_REQUEST', stream: true });
  });

  it('ends the client’s stream with an error event, not [DONE], when the provider’s stream breaks', async () => {
    const g = await startGateway({ env: { SVCGW_UPSTREAM_BODY_TIMEOUT_MS: '300' } });
    g.mock.behave({ kind: 'stream-then-hang', chunks: 2 });
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-service-api-key': g.adminKey, 'content-type': 'application/json', ...g.viaMock },
      body: JSON.stringify({ ...chat, stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain('[DONE]');
    const last = JSON.parse(text.trim().split('\n\n').at(-1)!.slice('data: '.length));
    expect(last.error.code).toBe('UPSTREAM_STREAM_ERROR');
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ error_code: 'UPSTREAM_STREAM_ERROR', is_success: false });
    expect(log.error_message).toMatch(/time/i);
  });

  it('refuses a provider’s redirect on every route without passing its Location on, and falls back past it', async () => {
    const g = await startGateway();
    const where = 'http://127.0.0.1:1/v1/signed?sig=s3cret-signature';
    g.mock.behave({ kind: 'raw', status: 307, headers: { location: where }, body: Buffer.alloc(0) }, { times: 2 });
    const headers = { 'x-service-api-key': g.adminKey, 'content-type': 'application/json', ...g.viaMock };
    const unified = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify(chat),
      redirect: 'manual',
    });
    const passThrough = await fetch(`${g.baseUrl}/v1/vector_stores/vs_1/files`, { headers, redirect: 'manual' });
    for (const res of [unified, passThrough]) {
      expect(res.status).toBe(502);
      expect(res.headers.get('location')).toBeNull();
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('UPSTREAM_ERROR');
      expect(error.message).toContain('307, a redirect to http://127.0.0.1:1');
      expect(error.message).not.toContain('s3cret');
    }
    const logs = await g.logs(2);
    expect(logs.map((l: any) => [l.status_code, l.error_code])).toEqual([
      [502, 'UPSTREAM_ERROR'],
      [502, 'UPSTREAM_ERROR'],
    ]);

    // A config's next target answers instead.
    g.mock.behave({ kind: 'raw', status: 301, headers: { location: where }, body: Buffer.alloc(0) }, { times: 1 });
    const target = { provider: 'openai', custom_host: g.mock.baseUrl, api_key: 'sk-target' };
    const config = { strategy: { mode: 'fallback' }, targets: [target, target] };
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'x-service-config': JSON.stringify(config) },
      body: JSON.stringify(chat),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-target')).toBe('targets[1]');
  });

  it('ends a stream kept alive by comments alone after upstream_body_timeout_ms without an event', async () => {
    const g = await startGateway({ env: { SVCGW_UPSTREAM_BODY_TIMEOUT_MS: '600' } });
    const server = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hi' } }] })}\n\n`,
      );
      const beat = setInterval(() => res.write(': keep-alive\n\n'), 100);
      res.once('close', () => clearInterval(beat));
    });
    const provider = await listenOnLoopback(server);
    onTestFinished(() => provider.close());
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'x-service-api-key': g.adminKey,
        'content-type': 'application/json',
        ...g.viaMock,
        'x-service-custom-host': `${provider.url}/v1`,
      },
      body: JSON.stringify({ ...chat, stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"content":"Hi"');
    const last = JSON.parse(text.trim().split('\n\n').at(-1)!.slice('data: '.length));
    expect(last.error).toMatchObject({ code: 'UPSTREAM_STREAM_ERROR' });
    expect(last.error.message).toContain('sent no event within upstream_body_timeout_ms (600 ms)');
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ error_code: 'UPSTREAM_STREAM_ERROR', is_success: false });
  });

  it('ends an Anthropic stream kept alive by pings alone, translated to chat completions, the same way', async () => {
    const g = await startGateway({ env: { SVCGW_UPSTREAM_BODY_TIMEOUT_MS: '600' } });
    const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    const server = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [] };
      res.write(event('message_start', { type: 'message_start', message: { ...message, usage: { input_tokens: 3 } } }));
      const beat = setInterval(() => res.write(event('ping', { type: 'ping' })), 100);
      res.once('close', () => clearInterval(beat));
    });
    const provider = await listenOnLoopback(server);
    onTestFinished(() => provider.close());
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: viaAnthropic(g, provider.url),
      body: JSON.stringify({ model: 'claude-sonnet-4-5', stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const last = JSON.parse(text.trim().split('\n\n').at(-1)!.slice('data: '.length));
    expect(last.error).toMatchObject({ code: 'UPSTREAM_STREAM_ERROR' });
    expect(last.error.message).toContain('sent no event within upstream_body_timeout_ms (600 ms)');
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ error_code: 'UPSTREAM_STREAM_ERROR', is_success: false });
  });
});
