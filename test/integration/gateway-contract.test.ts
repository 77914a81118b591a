import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';
import { startMockAnthropic } from '../helpers/mock-anthropic-upstream.js';

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

/** POST a JSON body through the gateway; the answer's status, headers and text. */
async function post(g: GatewayHarness, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${g.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'x-service-api-key': g.adminKey, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const headerText = (headers: Headers) => [...headers.entries()].map(([name, value]) => `${name}: ${value}`).join('\n');

describe('secrets in gateway headers are never echoed', () => {
  it('masks provider keys and custom-host passwords in answers, request logs, audit and log lines', async () => {
    const g = await startGateway();
    const secrets = {
      providerName: 'sk-proj-PLANTEDprovidername0001',
      providerSlug: 'sk-proj-PLANTEDproviderslug0002',
      virtualKey: 'sk-proj-PLANTEDvirtualkey0003',
      oddVirtualKey: 'sk live/PLANTEDoddvirtualkey0004',
      hostPassword: 'PLANTEDhostpassword0005',
      configPassword: 'PLANTEDconfigpassword0006',
    };
    const attempts: Array<[Record<string, string>, number, string]> = [
      [{ 'x-service-provider': secrets.providerName, authorization: 'Bearer k' }, 400, 'x-service-provider'],
      [{ 'x-service-provider': `@${secrets.providerSlug}` }, 404, 'x-service-provider'],
      [{ 'x-service-virtual-key': secrets.virtualKey }, 404, 'x-service-virtual-key'],
      [{ 'x-service-virtual-key': secrets.oddVirtualKey }, 404, 'x-service-virtual-key'],
      [
        {
          'x-service-provider': 'openai',
          'x-service-custom-host': `http://user:${secrets.hostPassword}@127.0.0.1:9/v1`,
          authorization: 'Bearer k',
        },
        400,
        'x-service-custom-host',
      ],
      [
        {
          'x-service-config': JSON.stringify({
            provider: 'openai',
            api_key: 'k',
            custom_host: `http://user:${secrets.configPassword}@127.0.0.1:9/v1`,
          }),
        },
        400,
        'x-service-config.custom_host',
      ],
    ];
    for (const [headers, status, param] of attempts) {
      const res = await post(g, '/v1/chat/completions', chat, headers);
      expect(res.status, res.text).toBe(status);
      expect(JSON.parse(res.text).error.param).toBe(param);
      for (const secret of Object.values(secrets)) {
        expect(res.text).not.toContain(secret);
        expect(headerText(res.headers)).not.toContain(secret);
      }
    }
    // The sender can still recognise what was wrong: the header is named, the value masked.
    const unknown = await post(g, '/v1/chat/completions', chat, attempts[0]![0]);
    expect(JSON.parse(unknown.text).error.message).toContain("'sk-p…'");

    const logs = await g.logs(attempts.length + 1);
    expect(
      logs
        .map((log) => log.error_message)
        .every((message: unknown) => typeof message === 'string' && message.length > 0),
    ).toBe(true);
    const stored = [
      JSON.stringify(logs),
      JSON.stringify((await g.admin.get(`/v1/logs/${logs[0].id}`)).body),
      JSON.stringify((await g.admin.get(`/v1/logs/${logs[0].id}?log_format=flat`)).body),
      JSON.stringify((await g.admin.get('/v1/audit-logs')).body),
      g.logLines.join('\n'),
    ].join('\n');
    for (const secret of Object.values(secrets)) expect(stored).not.toContain(secret);
    expect(g.mock.requests).toHaveLength(0);
  });
});

describe('answers keep the contract', () => {
  it('relays a plain JSON answer to a stream request as sent, and logs it truthfully', async () => {
    const g = await startGateway();
    const completion = {
      id: 'chatcmpl-json',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini-2024-07-18',
      choices: [{ index: 0, message: { role: 'assistant', content: 'not a stream' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
    };
    const body = Buffer.from(JSON.stringify(completion));
    g.mock.behave(
      {
        kind: 'raw',
        status: 200,
        headers: { 'content-type': 'application/json', 'x-request-id': 'req_json_answer' },
        body,
      },
      { times: 1 },
    );
    const res = await post(g, '/v1/chat/completions', { ...chat, stream: true }, g.viaMock);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.text).toBe(body.toString());
    expect(res.headers.get('x-request-id')).toBe('req_json_answer');

    const [log] = await g.logs(1);
    expect(log).toMatchObject({
      status_code: 200,
      is_success: true,
      stream: true,
      prompt_tokens: 11,
      completion_tokens: 3,
      total_tokens: 14,
      model: 'gpt-4o-mini-2024-07-18',
      requested_model: 'gpt-4o-mini',
    });
    expect(res.headers.get('x-service-request-id')).toBe(log.id);

    // A provider error on a stream request is still the error, with the provider's status.
    g.mock.behave({ kind: 'error', status: 400 }, { times: 1 });
    const failed = await post(g, '/v1/chat/completions', { ...chat, stream: true }, g.viaMock);
    expect(failed.status).toBe(400);
    expect(JSON.parse(failed.text).error.message).toBeTruthy();
  });

  it("passes the provider's retry-after, rate-limit and request-id headers on errors, and the gateway's own id beside them", async () => {
    const g = await startGateway();
    const providerHeaders = {
      'retry-after': '7',
      'retry-after-ms': '7000',
      'x-ratelimit-limit-requests': '500',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '7s',
      'x-request-id': 'req_provider_429',
    };
    g.mock.behave({ kind: 'error', status: 429, headers: providerHeaders }, { times: 1 });
    const limited = await post(g, '/v1/chat/completions', chat, g.viaMock);
    expect(limited.status).toBe(429);
    for (const [name, value] of Object.entries(providerHeaders)) expect(limited.headers.get(name), name).toBe(value);
    const [log] = await g.logs(1);
    expect(limited.headers.get('x-service-request-id')).toBe(log.id);
    expect(log).toMatchObject({ status_code: 429, error_code: 'UPSTREAM_ERROR' });

    // The official client sees them too (its retries read retry-after and x-request-id).
    g.mock.behave({ kind: 'error', status: 429, headers: providerHeaders }, { times: 1 });
    type ApiError = { status: number; requestID: string | null; headers: Headers };
    const error = (await g
      .openai()
      .chat.completions.create(chat as never)
      .then(
        () => null,
        (e: unknown) => e,
      )) as ApiError;
    expect(error.status).toBe(429);
    expect(error.requestID).toBe('req_provider_429');
    expect(error.headers.get('retry-after')).toBe('7');

    // A success: the provider's x-request-id unchanged, the log record's id in x-service-request-id.
    const ok = await post(g, '/v1/chat/completions', chat, g.viaMock);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    const logs = await g.logs(3);
    expect(ok.headers.get('x-service-request-id')).toBe(logs[0].id);
  });

  it("puts the gateway's request id on answers it makes itself, on both planes, 404s included", async () => {
    const g = await startGateway();
    const missing = await post(g, '/v1/chat/completions', chat, {});
    expect(missing.status).toBe(400);
    const [log] = await g.logs(1);
    expect(missing.headers.get('x-service-request-id')).toBe(log.id);
    expect(missing.headers.get('x-request-id')).toBe(log.request_id);

    for (const res of [
      await fetch(`${g.baseUrl}/nowhere`),
      await fetch(`${g.baseUrl}/v1/workspaces`, { headers: { 'x-service-api-key': g.adminKey } }),
      await fetch(`${g.baseUrl}/v1/chat/completions`, { method: 'POST' }),
    ]) {
      const id = res.headers.get('x-service-request-id');
      expect(id, res.url).toBeTruthy();
      expect(res.headers.get('x-request-id')).toBe(id);
    }
  });

  it("relays a translated provider's request id and logs the served and requested model", async () => {
    const g = await startGateway();
    const anthropic = await startMockAnthropic();
    onTestFinished(() => anthropic.close());
    const headers = {
      'x-service-provider': 'anthropic',
      'x-service-custom-host': anthropic.url,
      authorization: 'Bearer sk-ant-test',
    };
    const body = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] };

    const ok = await post(g, '/v1/chat/completions', body, headers);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('request-id')).toMatch(/^req_/);

    anthropic.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, { times: 1 });
    const failed = await post(g, '/v1/chat/completions', body, headers);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.headers.get('request-id')).toMatch(/^req_/);

    // Native Messages API streams: logged as streams, with their model.
    const native = await post(
      g,
      '/v1/messages',
      { ...body, max_tokens: 16, stream: true },
      { ...headers, 'x-api-key': 'sk-ant-test' },
    );
    expect(native.status).toBe(200);
    expect(native.text).toContain('message_stop');
    const logs = await g.logs(3);
    expect(logs[0]).toMatchObject({
      path: '/v1/messages',
      stream: true,
      model: 'claude-sonnet-4-5',
      requested_model: 'claude-sonnet-4-5',
      is_success: true,
    });
    expect(logs[0].completion_tokens).toBeGreaterThan(0);
  });
});
