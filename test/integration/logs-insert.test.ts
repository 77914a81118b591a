import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const NOW = Date.parse('2026-06-01T09:00:00Z');

/** A record as the reference gateway's documentation shows one: a chat completion made elsewhere. */
const chatLog = (over: { metadata?: Record<string, string>; status?: number; prompt?: string } = {}) => ({
  request: {
    url: 'https://api.openai.com/v1/chat/completions?api-version=secret-looking',
    method: 'POST',
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: over.prompt ?? 'What is 2+2?' }] },
  },
  response: {
    status: over.status ?? 200,
    body:
      (over.status ?? 200) >= 400
        ? { error: { message: 'The server had an error', code: 'server_error' } }
        : {
            id: 'chatcmpl-1',
            model: 'gpt-4o-mini-2024-07-18',
            choices: [{ message: { role: 'assistant', content: '4' } }],
            usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
          },
    response_time: 420,
  },
  ...(over.metadata ? { metadata: over.metadata } : {}),
});

async function setUp(env: Record<string, string> = {}) {
  const t = await startTestServer({ clock: createManualClock(NOW), env });
  const admin = apiClient(t.baseUrl, t.adminKey);
  const b = await createWorkspace(admin, 'Team B', 'team-b');
  const writerA = apiClient(
    t.baseUrl,
    (await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['logs.create', 'logs.list', 'logs.view'] }))
      .key,
  );
  const writerB = apiClient(
    t.baseUrl,
    (await createWorkspaceKey(admin, { workspace_id: 'team-b', scopes: ['logs.create', 'logs.list'] })).key,
  );
  return { t, admin, b, writerA, writerB };
}

describe('POST /v1/logs: request logs of calls made outside the gateway', () => {
  it('stores a record as a request log of the key’s workspace: tokens, cost, tracing, metadata', async () => {
    const { t, admin, writerA } = await setUp();
    const res = await writerA.post(
      '/v1/logs',
      chatLog({ metadata: { trace_id: 'checkout-42', span_name: 'answer', _user: 'ada', env: 'prod' } }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toBeNull(); // no body, as the reference answers

    const list = await writerA.get('/v1/logs?trace_id=checkout-42');
    expect(list.body).toMatchObject({ object: 'list', total: 1, total_is_lower_bound: false });
    const log = list.body.data[0];
    expect(log).toMatchObject({
      trace_id: 'checkout-42',
      span_name: 'answer',
      workspace_id: t.server.bootstrap.workspaceId,
      provider: 'openai',
      credential_source: 'external',
      model: 'gpt-4o-mini',
      endpoint_type: 'chatComplete',
      method: 'POST',
      // The query string (which may carry a key) and any credentials are not stored.
      path: 'https://api.openai.com/v1/chat/completions',
      status_code: 200,
      is_success: true,
      latency_ms: 420,
      prompt_tokens: 1000,
      completion_tokens: 500,
      total_tokens: 1500,
      metadata: { _user: 'ada', env: 'prod' },
      created_at: new Date(NOW).toISOString(),
    });
    // 1000 × 0.15 + 500 × 0.6 per million tokens.
    expect(log.cost).toBeCloseTo(0.00045, 10);
    // Bodies follow LOG_BODIES, off by default, like the gateway's own records.
    const one = await writerA.get(`/v1/logs/${log.id}`);
    expect(one.body).toMatchObject({ _id: log.id, response: { status: 200, responseTime: 420 } });
    expect(one.body.request).not.toHaveProperty('body');
    expect(one.body.response).not.toHaveProperty('body');

    // They count in analytics, under their user and model.
    const users = await admin.get('/v1/analytics/groups/users');
    // As the reference types them: strings, the cost in cents; dollars in cost_usd.
    expect(users.body.data).toEqual([
      {
        user: 'ada',
        requests: '1',
        cost: String(Number((log.cost * 100).toPrecision(12))),
        cost_usd: log.cost,
        object: 'analytics-group',
      },
    ]);
    // And the change is audited without the request's contents.
    const audit = await admin.get('/v1/audit-logs?resource_type=request_log');
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({ action: 'create', uri: '/v1/logs', response_status_code: 200 });
    expect(JSON.stringify(audit.body.data[0])).not.toContain('2+2');
  });

  it('takes an array; failures are recorded as failures; bodies are kept when LOG_BODIES is on', async () => {
    const { writerA } = await setUp({ SVCGW_LOG_BODIES: 'ON' });
    const res = await writerA.post('/v1/logs', [
      chatLog({ metadata: { trace_id: 't-ok' } }),
      chatLog({ metadata: { trace_id: 't-fail' }, status: 500 }),
    ]);
    expect(res.status).toBe(200);
    const failed = (await writerA.get('/v1/logs?trace_id=t-fail')).body.data[0];
    expect(failed).toMatchObject({
      status_code: 500,
      is_success: false,
      error_code: 'server_error',
      error_message: 'The server had an error',
      total_tokens: null,
      cost: null,
    });
    const ok = (await writerA.get('/v1/logs?trace_id=t-ok')).body.data[0];
    // The reference's LogObject carries the bodies parsed; the flat record as they were stored.
    const full = await writerA.get(`/v1/logs/${ok.id}`);
    expect(full.body.request.body).toMatchObject({ model: 'gpt-4o-mini' });
    expect(full.body.response.body).toMatchObject({ usage: { total_tokens: 1500 } });
    const flat = await writerA.get(`/v1/logs/${ok.id}?log_format=flat`);
    expect(JSON.parse(flat.body.request_body)).toMatchObject({ model: 'gpt-4o-mini' });
  });

  it('keeps tenants apart: a workspace key writes only into its workspace; admin keys name one', async () => {
    const { admin, b, writerA, writerB } = await setUp();
    const foreign = await writerA.post('/v1/logs?workspace_id=team-b', chatLog());
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('WORKSPACE_FORBIDDEN');
    expect((await writerB.post('/v1/logs', chatLog({ metadata: { trace_id: 'from-b' } }))).status).toBe(200);
    expect((await writerA.get('/v1/logs?trace_id=from-b')).body.total).toBe(0);
    expect((await writerB.get('/v1/logs?trace_id=from-b')).body.data[0].workspace_id).toBe(b.id);

    expect(
      (await admin.post('/v1/logs?workspace_id=team-b', chatLog({ metadata: { trace_id: 'admin-b' } }))).status,
    ).toBe(200);
    expect((await writerB.get('/v1/logs?trace_id=admin-b')).body.total).toBe(1);
    const missing = await admin.post('/v1/logs?workspace_id=no-such-workspace', chatLog());
    expect(missing.status).toBe(404);
    expect((await admin.delete('/v1/workspaces/team-b')).status).toBe(200);
    const archived = await admin.post('/v1/logs?workspace_id=team-b', chatLog());
    expect(archived.status).toBe(400);
    expect(archived.body.error.param).toBe('workspace_id');
  });

  it('refuses bad records with the field named, and keys without logs.create', async () => {
    const { t, admin, writerA } = await setUp();
    const cases: Array<[unknown, string, RegExp]> = [
      [{ response: chatLog().response }, 'request', /request/],
      [{ ...chatLog(), request: { ...chatLog().request, url: 'ftp://x' } }, 'request.url', /http\(s\) URL or a path/],
      [
        { ...chatLog(), request: { ...chatLog().request, headers: { authorization: 'Bearer sk-1' } } },
        'request.headers',
        /request logs keep no headers/,
      ],
      [{ ...chatLog(), metadata: { env: 1 } }, 'metadata.env', /string/],
      [{ ...chatLog(), metadata: { trace_id: 'has spaces' } }, 'metadata', /trace_id must be/],
      [{ ...chatLog(), response: { ...chatLog().response, status: 999 } }, 'response.status', /599/],
      [{ ...chatLog(), surprise: true }, '', /surprise/],
      [[], '', /at least 1|>=1|too small/i],
    ];
    for (const [body, param, message] of cases) {
      const res = await writerA.post('/v1/logs', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      if (param) expect(res.body.error.param).toContain(param);
      expect(res.body.error.message).toMatch(message);
    }
    const tooMany = await writerA.post(
      '/v1/logs',
      Array.from({ length: 1001 }, () => chatLog()),
    );
    expect(tooMany.status).toBe(400);
    const noScope = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['logs.list'] })).key,
    );
    const refused = await noScope.post('/v1/logs', chatLog());
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('MISSING_SCOPE');
    // Nothing of the refused calls was stored.
    expect((await admin.get('/v1/logs')).body.total).toBe(0);
  });

  it('a dry run checks the records and stores nothing', async () => {
    const { admin } = await setUp();
    const res = await admin.post('/v1/logs', chatLog(), { 'x-service-dry-run': 'true' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-dry-run')).toBe('true');
    expect((await admin.get('/v1/logs')).body.total).toBe(0);
  });
});
