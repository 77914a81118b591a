import { onTestFinished, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startMockOpenAI, type MockOpenAI } from '../helpers/mock-openai-upstream.js';

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] };

/** A config target that reaches one mock through the custom-host credential mode. */
const at = (mock: MockOpenAI, extra: Record<string, unknown> = {}) => ({
  provider: 'openai',
  custom_host: mock.baseUrl,
  api_key: 'sk-target',
  ...extra,
});

async function mocks(count: number): Promise<MockOpenAI[]> {
  const all = await Promise.all(Array.from({ length: count }, () => startMockOpenAI()));
  onTestFinished(() => Promise.all(all.map((m) => m.close())).then(() => undefined));
  return all;
}

/** POST /v1/chat/completions with a config (inline object, slug or id) and optional extra headers. */
function send(g: GatewayHarness, config: unknown, body: unknown = chat, headers: Record<string, string> = {}) {
  return fetch(`${g.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'x-service-api-key': g.adminKey,
      'content-type': 'application/json',
      ...(config === null ? {} : { 'x-service-config': typeof config === 'string' ? config : JSON.stringify(config) }),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

describe('fallback', () => {
  it('moves to the next target on 429/5xx and network errors, in order, and says which target served', async () => {
    const g = await startGateway();
    const [a, b, c] = await mocks(3);
    a!.behave({ kind: 'error', status: 503 });
    b!.behave({ kind: 'destroy' });
    const config = { strategy: { mode: 'fallback' }, targets: [at(a!), at(b!), at(c!, { name: 'last-resort' })] };
    const res = await send(g, config);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).object).toBe('chat.completion');
    expect(res.headers.get('x-service-target')).toBe('last-resort');
    expect(res.headers.get('x-service-retry-count')).toBe('2');
    expect([a!.requests.length, b!.requests.length, c!.requests.length]).toEqual([1, 1, 1]);
    const [log] = await g.logs(1);
    expect(log.is_success).toBe(true);
    expect(
      log.attempts.map((x: { target: string; status: number | null; error_code?: string }) => [
        x.target,
        x.status,
        x.error_code ?? null,
      ]),
    ).toEqual([
      ['targets[0]', 503, null],
      ['targets[1]', null, 'UPSTREAM_UNREACHABLE'],
      ['last-resort', 200, null],
    ]);
    expect(log.retry_count).toBe(2);
    // The reference's LogObject names the target as a JSON path into the config, whatever its name.
    const record = (await g.admin.get(`/v1/logs/${log.id}`)).body;
    expect(record.response).toMatchObject({ lastUsedOptionJsonPath: 'config.targets[2]', target: 'last-resort' });
    expect(record.metrics).toMatchObject({ last_used_option_index: 2, retry_success_count: 2 });
  });

  it('moves on only for the listed status codes; other errors reach the client unchanged', async () => {
    const g = await startGateway();
    const [a, b] = await mocks(2);
    a!.behave({ kind: 'error', status: 500 });
    const only429 = { strategy: { mode: 'fallback', on_status_codes: [429] }, targets: [at(a!), at(b!)] };
    const res = await send(g, only429);
    expect(res.status).toBe(500);
    expect(b!.requests).toHaveLength(0);

    a!.behave({ kind: 'error', status: 400 });
    const defaults = { strategy: { mode: 'fallback' }, targets: [at(a!), at(b!)] };
    const bad = await send(g, defaults);
    expect(bad.status).toBe(400); // a client error is not the provider failing: no fallback
    expect(b!.requests).toHaveLength(0);

    a!.behave({ kind: 'error', status: 429 });
    expect((await send(g, only429)).status).toBe(200);
    expect(b!.requests).toHaveLength(1);
  });

  it('returns the last target’s failure when every target fails', async () => {
    const g = await startGateway();
    const [a, b] = await mocks(2);
    a!.behave({ kind: 'error', status: 503 });
    b!.behave({ kind: 'error', status: 502 });
    const res = await send(g, { strategy: { mode: 'fallback' }, targets: [at(a!), at(b!)] });
    expect(res.status).toBe(502);
    expect(res.headers.get('x-service-target')).toBe('targets[1]');
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ is_success: false, status_code: 502, retry_count: 1 });
    expect((await g.admin.get(`/v1/logs/${log.id}`)).body.response).toMatchObject({
      status: 502,
      lastUsedOptionJsonPath: 'config.targets[1]',
    });
  });

  it('counts a request_timeout as a failure and falls back', async () => {
    const g = await startGateway();
    const [slow, fast] = await mocks(2);
    slow!.behave({ kind: 'delay', ms: 30_000 });
    const res = await send(g, {
      strategy: { mode: 'fallback' },
      request_timeout: 200,
      targets: [at(slow!), at(fast!)],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-target')).toBe('targets[1]');
    const [log] = await g.logs(1);
    expect(log.attempts[0]).toMatchObject({ target: 'targets[0]', status: null, error_code: 'UPSTREAM_TIMEOUT' });
    await slow!.waitForAborted(1); // the stalled attempt was cancelled, not left running
  });

  it('a request_timeout with nowhere to fall back answers 504', async () => {
    const g = await startGateway();
    const [slow] = await mocks(1);
    slow!.behave({ kind: 'delay', ms: 30_000 });
    const res = await send(g, { request_timeout: 150, targets: [at(slow!)], strategy: { mode: 'single' } });
    expect(res.status).toBe(504);
    expect(((await res.json()) as any).error.code).toBe('UPSTREAM_TIMEOUT');
  });
});

describe('streams', () => {
  it('falls back when a stream fails before its first byte', async () => {
    const g = await startGateway();
    const [a, b] = await mocks(2);
    a!.behave({ kind: 'destroy' });
    const res = await send(g, { strategy: { mode: 'fallback' }, targets: [at(a!), at(b!)] }, { ...chat, stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(res.headers.get('x-service-target')).toBe('targets[1]');
  });

  it('never restarts a stream that has sent its first byte: the client gets an error event, the next target is not called', async () => {
    const g = await startGateway({ env: { SVCGW_UPSTREAM_BODY_TIMEOUT_MS: '300' } });
    const [a, b] = await mocks(2);
    a!.behave({ kind: 'stream-then-hang', chunks: 2 });
    // request_timeout is shorter than the hang: it must not apply once the stream has begun.
    const res = await send(
      g,
      { strategy: { mode: 'fallback' }, request_timeout: 5_000, retry: { attempts: 2 }, targets: [at(a!), at(b!)] },
      { ...chat, stream: true },
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"chat.completion.chunk"');
    expect(text).not.toContain('[DONE]');
    expect(JSON.parse(text.trim().split('\n\n').at(-1)!.slice('data: '.length)).error.code).toBe(
      'UPSTREAM_STREAM_ERROR',
    );
    expect(b!.requests).toHaveLength(0);
    expect(a!.requests).toHaveLength(1);
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ is_success: false, error_code: 'UPSTREAM_STREAM_ERROR' });
  });

  it('the time-out stops applying once a stream has begun', async () => {
    const g = await startGateway({ mock: { chunkDelayMs: 60, streamChunks: 6 } });
    const res = await send(
      g,
      { request_timeout: 100, provider: 'openai', custom_host: g.mock.baseUrl, api_key: 'k' },
      { ...chat, stream: true },
    );
    const text = await res.text();
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
  });
});

describe('retries', () => {
  it('retries the same target, honouring retry-after, and counts the retries', async () => {
    const g = await startGateway();
    g.mock.behave({ kind: 'error', status: 429, headers: { 'retry-after': '0.2' } }, { times: 2 });
    const res = await send(g, {
      retry: { attempts: 3, use_retry_after_header: true },
      provider: 'openai',
      custom_host: g.mock.baseUrl,
      api_key: 'k',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-retry-count')).toBe('2');
    expect(res.headers.get('x-service-target')).toBe('root');
    expect(g.mock.requests).toHaveLength(3);
    const [log] = await g.logs(1);
    expect(log.attempts.map((x: { status: number }) => x.status)).toEqual([429, 429, 200]);
  });

  it('stops after `attempts` retries and returns the last answer; statuses not listed are not retried', async () => {
    const g = await startGateway();
    g.mock.behave({ kind: 'error', status: 503 });
    const res = await send(g, {
      retry: { attempts: 2 },
      provider: 'openai',
      custom_host: g.mock.baseUrl,
      api_key: 'k',
    });
    expect(res.status).toBe(503);
    expect(g.mock.requests).toHaveLength(3);

    g.mock.reset();
    g.mock.behave({ kind: 'error', status: 503 });
    expect(
      (
        await send(g, {
          retry: { attempts: 2, on_status_codes: [429] },
          provider: 'openai',
          custom_host: g.mock.baseUrl,
          api_key: 'k',
        })
      ).status,
    ).toBe(503);
    expect(g.mock.requests).toHaveLength(1);
  });

  it('does not wait for a retry-after beyond a minute: the failure is returned at once', async () => {
    const g = await startGateway();
    g.mock.behave({ kind: 'error', status: 429, headers: { 'retry-after': '3600' } });
    const res = await send(g, {
      retry: { attempts: 3, use_retry_after_header: true },
      provider: 'openai',
      custom_host: g.mock.baseUrl,
      api_key: 'k',
    });
    expect(res.status).toBe(429);
    expect(g.mock.requests).toHaveLength(1);
  });
});

describe('load balancing and conditions', () => {
  it('spreads requests by weight', async () => {
    const g = await startGateway();
    const [a, b, never] = await mocks(3);
    const config = {
      strategy: { mode: 'loadbalance' },
      targets: [at(a!, { weight: 3 }), at(b!, { weight: 1 }), at(never!, { weight: 0 })],
    };
    const total = 200;
    for (let i = 0; i < total; i += 20)
      await Promise.all(Array.from({ length: 20 }, () => send(g, config).then((r) => r.arrayBuffer())));
    expect(a!.requests.length + b!.requests.length).toBe(total);
    expect(never!.requests).toHaveLength(0);
    // 75 % expected; ±12 points is about four standard deviations at 200 requests.
    expect(a!.requests.length / total).toBeGreaterThan(0.63);
    expect(a!.requests.length / total).toBeLessThan(0.87);
  });

  it('routes by metadata and by request params, with the default when nothing matches', async () => {
    const g = await startGateway();
    const [pro, big, small] = await mocks(3);
    const config = {
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { 'metadata.tier': { $eq: 'pro' } }, then: 'pro' },
          {
            query: { $or: [{ 'params.model': { $in: ['gpt-4o', 'o3'] } }, { 'metadata.priority': { $gte: 5 } }] },
            then: 'big',
          },
        ],
        default: 'small',
      },
      targets: [at(pro!, { name: 'pro' }), at(big!, { name: 'big' }), at(small!, { name: 'small' })],
    };
    const meta = (m: Record<string, string>) => ({ 'x-service-metadata': JSON.stringify(m) });
    expect((await send(g, config, chat, meta({ tier: 'pro' }))).headers.get('x-service-target')).toBe('pro');
    expect((await send(g, config, { ...chat, model: 'gpt-4o' })).headers.get('x-service-target')).toBe('big');
    expect((await send(g, config, chat, meta({ priority: '7' }))).headers.get('x-service-target')).toBe('big');
    expect((await send(g, config, chat, meta({ priority: '2', tier: 'free' }))).headers.get('x-service-target')).toBe(
      'small',
    );
    expect([pro!.requests.length, big!.requests.length, small!.requests.length]).toEqual([1, 2, 1]);
  });

  it("routes by a client's patterns without its runaway pattern holding the gateway", async () => {
    const g = await startGateway();
    const [big, small] = await mocks(2);
    const config = {
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { 'params.user': { $regex: '^(a+)+$' } }, then: 'big' },
          { query: { 'params.model': { $regex: '^(o3|gpt-4o)$' } }, then: 'big' },
        ],
        default: 'small',
      },
      targets: [at(big!, { name: 'big' }), at(small!, { name: 'small' })],
    };
    // Backtracks for minutes in the gateway's own thread; on the regex worker it runs out its
    // time limit, does not match, and the request goes to the default.
    let answered = false;
    const runaway = send(g, config, { ...chat, user: `${'a'.repeat(40)}!` }).then((res) => {
      answered = true;
      return res;
    });
    // Other requests are answered meanwhile: the test runs out its limit on the worker.
    const health = await fetch(`${g.baseUrl}/v1/health`);
    expect(health.status).toBe(200);
    expect(answered).toBe(false);
    expect((await runaway).headers.get('x-service-target')).toBe('small');
    expect((await send(g, config, { ...chat, model: 'gpt-4o' })).headers.get('x-service-target')).toBe('big');
    expect([big!.requests.length, small!.requests.length]).toEqual([1, 1]);
  });

  it('nests strategies and merges override_params down the tree, the deeper node winning', async () => {
    const g = await startGateway();
    const [a, b] = await mocks(2);
    a!.behave({ kind: 'error', status: 500 });
    const config = {
      strategy: { mode: 'fallback' },
      override_params: { temperature: 0.3, model: 'gpt-4o' },
      targets: [
        { name: 'primary', strategy: { mode: 'loadbalance' }, override_params: { max_tokens: 50 }, targets: [at(a!)] },
        {
          name: 'backup',
          strategy: { mode: 'single' },
          override_params: { max_tokens: 20 },
          targets: [at(b!, { override_params: { model: 'gpt-4.1-mini' } })],
        },
      ],
    };
    const res = await send(g, config);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-target')).toBe('backup.targets[0]');
    expect(a!.requests[0]!.json).toMatchObject({ model: 'gpt-4o', temperature: 0.3, max_tokens: 50 });
    expect(b!.requests[0]!.json).toMatchObject({
      model: 'gpt-4.1-mini',
      temperature: 0.3,
      max_tokens: 20,
      messages: chat.messages,
    });
    const [log] = await g.logs(1);
    expect(log.model).toBe('gpt-4.1-mini');
    expect((await g.admin.get(`/v1/logs/${log.id}`)).body.response.lastUsedOptionJsonPath).toBe(
      'config.targets[1].targets[0]',
    );
  });
});

describe('choosing a config', () => {
  it('uses a stored config by slug or id, its latest version at once after an update, and logs its id', async () => {
    const g = await startGateway();
    const [a, b] = await mocks(2);
    const created = await g.admin.post('/v1/configs', {
      name: 'Route',
      slug: 'route',
      config: { strategy: { mode: 'single' }, targets: [{ provider: 'openai', custom_host: a!.baseUrl }] },
    });
    expect(created.status).toBe(200);
    const headers = { authorization: 'Bearer sk-client' };
    expect((await send(g, 'route', chat, headers)).status).toBe(200);
    expect(a!.requests[0]!.headers.authorization).toBe('Bearer sk-client'); // no api_key in the stored config: the request's own key
    expect((await send(g, created.body.id, chat, headers)).status).toBe(200);
    await g.admin.put('/v1/configs/route', {
      config: { strategy: { mode: 'single' }, targets: [{ provider: 'openai', custom_host: b!.baseUrl }] },
    });
    expect((await send(g, 'route', chat, headers)).status).toBe(200);
    expect([a!.requests.length, b!.requests.length]).toEqual([2, 1]);
    const logs = await g.logs(3);
    expect(logs.every((log: { config_id: string }) => log.config_id === created.body.id)).toBe(true);

    await g.admin.delete('/v1/configs/route');
    const gone = await send(g, 'route', chat, headers);
    expect(gone.status).toBe(400);
    expect(((await gone.json()) as any).error).toMatchObject({ code: 'CONFIG_NOT_FOUND', param: 'x-service-config' });
  });

  it('refuses an invalid inline config with AB01 and the JSON path of the problem, before any provider call', async () => {
    const g = await startGateway();
    const cases: Array<[unknown, string]> = [
      [{ strategy: { mode: 'fallback' }, targets: [at(g.mock, { weight: -1 })] }, 'x-service-config.targets[0].weight'],
      [{ strategy: { mode: 'sideways' }, targets: [at(g.mock)] }, 'x-service-config.strategy.mode'],
      [{ targets: [at(g.mock)] }, 'x-service-config.strategy'],
      [
        {
          strategy: { mode: 'fallback' },
          targets: [{ strategy: { mode: 'single' }, cache: { mode: 'simple' }, targets: [at(g.mock)] }],
        },
        'x-service-config.targets[0].cache',
      ],
      [{ retry: { attempts: 11 }, provider: 'openai', api_key: 'k' }, 'x-service-config.retry.attempts'],
      [{ provider: 'no-such-provider', api_key: 'k' }, 'x-service-config.provider'],
    ];
    for (const [config, param] of cases) {
      const res = await send(g, config);
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as any;
      expect(error.code).toBe('AB01_INVALID_CONFIG');
      expect(error.param).toBe(param);
    }
    const notJson = await send(g, '{not json');
    expect(((await notJson.json()) as any).error).toMatchObject({
      code: 'AB01_INVALID_CONFIG',
      param: 'x-service-config',
    });
    expect(g.mock.requests).toHaveLength(0);
  });

  it('applies an API key’s default config and metadata; with allow_config_override false the key cannot name another', async () => {
    const g = await startGateway();
    const [a, b] = await mocks(2);
    const ws = await createWorkspace(g.admin, 'routing');
    const cfgA = await g.admin.post('/v1/configs', {
      name: 'A',
      slug: 'to-a',
      workspace_id: ws.id,
      config: { provider: 'openai', custom_host: a!.baseUrl },
    });
    await g.admin.post('/v1/configs', {
      name: 'B',
      slug: 'to-b',
      workspace_id: ws.id,
      config: { provider: 'openai', custom_host: b!.baseUrl },
    });
    const key = (
      await g.admin.post('/v1/api-keys/workspace/service', {
        name: 'app',
        workspace_id: ws.id,
        scopes: ['completions.write'],
        defaults: { config_id: 'to-a', metadata: { team: 'search' } },
      })
    ).body;
    const shown = await g.admin.get(`/v1/api-keys/${key.id}`);
    expect(shown.body.defaults).toEqual({
      config_id: cfgA.body.id,
      metadata: { team: 'search' },
      allow_config_override: true,
      allowed_models: null,
    });

    const call = (headers: Record<string, string> = {}) =>
      fetch(`${g.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'x-service-api-key': key.key,
          'content-type': 'application/json',
          authorization: 'Bearer sk-c',
          ...headers,
        },
        body: JSON.stringify(chat),
      });
    expect((await call()).status).toBe(200);
    expect((await call({ 'x-service-config': 'to-b' })).status).toBe(200);
    expect([a!.requests.length, b!.requests.length]).toEqual([1, 1]);
    const logs = await g.logs(2);
    expect(logs.map((l: { metadata: Record<string, string> }) => l.metadata.team)).toEqual(['search', 'search']);

    await g.admin.put(`/v1/api-keys/${key.id}`, { defaults: { config_id: 'to-a', allow_config_override: false } });
    const refused = await call({ 'x-service-config': 'to-b' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as any).error.code).toBe('CONFIG_OVERRIDE_FORBIDDEN');
    expect((await call()).status).toBe(200);

    const unknown = await g.admin.put(`/v1/api-keys/${key.id}`, { defaults: { config_id: 'nope' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.param).toBe('defaults.config_id');
  });

  it('a workspace key cannot use another workspace’s config', async () => {
    const g = await startGateway();
    const ws = await createWorkspace(g.admin, 'mine');
    const other = await createWorkspace(g.admin, 'theirs');
    await g.admin.post('/v1/configs', {
      name: 'Theirs',
      slug: 'theirs',
      workspace_id: other.id,
      config: { provider: 'openai', custom_host: g.mock.baseUrl },
    });
    const key = await createWorkspaceKey(g.admin, { workspace_id: ws.id, scopes: ['completions.write'] });
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'x-service-api-key': key.key,
        'content-type': 'application/json',
        'x-service-config': 'theirs',
        authorization: 'Bearer k',
      },
      body: JSON.stringify(chat),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe('CONFIG_NOT_FOUND');
    const bad = await apiClient(g.baseUrl, g.adminKey).post('/v1/api-keys/workspace/service', {
      name: 'x',
      workspace_id: ws.id,
      scopes: ['completions.write'],
      defaults: { config_id: 'theirs' },
    });
    expect(bad.status).toBe(403);
  });

  it('routes a pass-through request to the target the config picks (one attempt: its body streams)', async () => {
    const g = await startGateway();
    const [a, b] = await mocks(2);
    a!.behave({ kind: 'error', status: 503 });
    const res = await fetch(`${g.baseUrl}/v1/files?purpose=x`, {
      headers: {
        'x-service-api-key': g.adminKey,
        'x-service-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [at(a!), at(b!)] }),
      },
    });
    expect(res.status).toBe(503);
    expect(a!.requests[0]!.url).toBe('/v1/files?purpose=x');
    expect(b!.requests).toHaveLength(0);
  });
});
