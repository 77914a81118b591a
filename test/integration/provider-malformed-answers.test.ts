import { createServer } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ANTHROPIC_TEST_KEY, startGateway, viaAnthropic } from '../helpers/gateway.js';
import { listenOnLoopback } from '../helpers/loopback-server.js';

const chat = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] };

/** An Anthropic endpoint whose every answer is a 200 with `body`, as sent. */
async function anthropicAnswering(body: string) {
  const server = createServer((req, res) => {
    req.resume();
    req.once('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  const loopback = await listenOnLoopback(server);
  onTestFinished(() => loopback.close());
  return loopback.url;
}

const message = (content: unknown) =>
  JSON.stringify({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content,
    stop_reason: 'end_turn',
    usage: { input_tokens: 3, output_tokens: 1 },
  });

describe('a 200 from a provider that cannot be what was asked for', () => {
  it.each([
    ['a content block that is null', message([null])],
    ['content that is not a list', message('Hi')],
    ['a body that is not JSON', '<html>maintenance</html>'],
    ['an empty body', ''],
    ['a JSON array', '[]'],
  ])('is a 502 that says the answer could not be read (%s), and a config falls back past it', async (_, body) => {
    const g = await startGateway();
    const url = await anthropicAnswering(body);
    const headers = { 'content-type': 'application/json', 'x-service-api-key': g.adminKey };
    const direct = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: viaAnthropic(g, url),
      body: JSON.stringify(chat),
    });
    expect(direct.status).toBe(502);
    const { error } = (await direct.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('UPSTREAM_ERROR');
    expect(error.message).toMatch(/^The provider \(anthropic\) answered 200 with a body the gateway could not read: /);
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ status_code: 502, error_code: 'UPSTREAM_ERROR', provider: 'anthropic' });
    expect(g.logLines.filter((line) => /"level":50/.test(line))).toEqual([]);

    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'anthropic', custom_host: url, api_key: ANTHROPIC_TEST_KEY },
        { provider: 'openai', custom_host: g.mock.baseUrl, api_key: 'sk-target' },
      ],
    };
    const fellBack = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'x-service-config': JSON.stringify(config) },
      body: JSON.stringify(chat),
    });
    expect(fellBack.status).toBe(200);
    expect(fellBack.headers.get('x-service-target')).toBe('targets[1]');
  });

  it('on the OpenAI format too: a maintenance page with 200 is a 502, retried by a config, and never relayed as a 200', async () => {
    const g = await startGateway();
    const page = {
      kind: 'raw',
      status: 200,
      headers: { 'content-type': 'text/html' },
      body: Buffer.from('<h1>Back soon</h1>'),
    } as const;
    g.mock.behave(page, { times: 1 });
    const direct = await g.admin.post('/v1/chat/completions', chat, g.viaMock);
    expect(direct.status).toBe(502);
    expect(direct.body.error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: 'The provider (openai) answered 200 with a body the gateway could not read: it is not JSON.',
    });

    g.mock.behave(page, { times: 1 });
    const config = { retry: { attempts: 1 }, provider: 'openai', custom_host: g.mock.baseUrl, api_key: 'sk-t' };
    const retried = await g.admin.post('/v1/chat/completions', chat, { 'x-service-config': JSON.stringify(config) });
    expect(retried.status).toBe(200);
    expect(retried.body.object).toBe('chat.completion');
    expect(retried.headers.get('x-service-retry-count')).toBe('1');
    const [log] = await g.logs(2);
    expect(log).toMatchObject({ status_code: 200, retry_count: 1 });
    expect(log.total_tokens).toBeGreaterThan(0);
  });

  it('an empty 200 stream is a failed attempt too: 502 alone, retried by a config', async () => {
    const g = await startGateway();
    const empty = {
      kind: 'raw',
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: Buffer.alloc(0),
    } as const;
    const streamed = { ...chat, model: 'gpt-4o', stream: true };
    g.mock.behave(empty, { times: 1 });
    const direct = await g.admin.post('/v1/chat/completions', streamed, g.viaMock);
    expect(direct.status).toBe(502);
    expect(direct.body.error.message).toBe(
      'The provider (openai) answered 200 with a body the gateway could not read: the stream ended before any event.',
    );

    g.mock.behave(empty, { times: 1 });
    const config = { retry: { attempts: 1 }, provider: 'openai', custom_host: g.mock.baseUrl, api_key: 'sk-t' };
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-api-key': g.adminKey,
        'x-service-config': JSON.stringify(config),
      },
      body: JSON.stringify(streamed),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-retry-count')).toBe('1');
    expect(await res.text()).toContain('data: [DONE]');
  });
});
