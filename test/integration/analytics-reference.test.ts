import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createRequestLogRepository, type RequestLogInsert } from '../../src/storage/repositories/request-logs.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const NOW = Date.parse('2026-06-01T09:00:00Z');
const at = (hhmm: string) => `2026-06-01T${hhmm}:00.000Z`;
const K1 = randomUUID();
const K3 = randomUUID();
const T1 = `trace-${randomUUID()}`;
const T3 = `trace-${randomUUID()}`;
const T8 = `trace-${randomUUID()}`;
const HOURS = `start_time=${encodeURIComponent(at('06:00'))}&end_time=${encodeURIComponent(at('08:59'))}&interval=hour`;

/**
 * Known rows, by hand: users (metadata _user) alice (2 requests), bob (2), carol (1, workspace
 * B); errors 500 ×2 and 429 ×1 at 07:xx; cache hits at 100 and 200 ms; one request saved by
 * two retries (06:10) and one by a fallback (07:30).
 */
function rows(organisationId: string, defaultWs: string, wsB: string): RequestLogInsert[] {
  const base = (over: Partial<RequestLogInsert>): RequestLogInsert => ({
    id: randomUUID(),
    trace_id: randomUUID(),
    request_id: randomUUID(),
    organisation_id: organisationId,
    workspace_id: defaultWs,
    api_key_id: K1,
    provider: 'openai',
    credential_source: 'direct',
    model: 'gpt-4o',
    endpoint_type: 'chatComplete',
    method: 'POST',
    path: '/v1/chat/completions',
    status_code: 200,
    is_success: 1,
    is_stream: 0,
    latency_ms: 100,
    prompt_tokens: null,
    completion_tokens: null,
    cached_tokens: null,
    total_tokens: null,
    cost: null,
    cost_currency: 'USD',
    cache_status: 'MISS',
    metadata: null,
    created_at: at('06:00'),
    retry_count: 0,
    ...over,
  });
  const attempts = (...targets: string[]) =>
    JSON.stringify(targets.map((target) => ({ target, provider: 'openai', status: 200, latency_ms: 10 })));
  return [
    base({
      trace_id: T1,
      latency_ms: 100,
      cache_status: 'HIT',
      cost: 0.001,
      total_tokens: 30,
      metadata: '{"_user":"alice","team":"a"}',
    }),
    base({
      latency_ms: 300,
      cost: 0.002,
      total_tokens: 50,
      metadata: '{"_user":"alice","team":"b"}',
      created_at: at('06:10'),
      retry_count: 2,
      attempts: attempts('root', 'root', 'root'),
    }),
    base({
      trace_id: T3,
      model: 'claude',
      provider: 'anthropic',
      latency_ms: 200,
      cache_status: 'SEMANTIC_HIT',
      cost: 0.0005,
      total_tokens: 10,
      metadata: '{"_user":"bob","team":"a"}',
      created_at: at('06:20'),
    }),
    base({ status_code: 500, is_success: 0, latency_ms: 400, created_at: at('07:00') }),
    base({ status_code: 429, is_success: 0, latency_ms: 500, created_at: at('07:05') }),
    base({ status_code: 500, is_success: 0, latency_ms: 100, metadata: '{"_user":"bob"}', created_at: at('07:10') }),
    base({ latency_ms: 600, created_at: at('07:30'), retry_count: 1, attempts: attempts('targets[0]', 'targets[1]') }),
    base({
      trace_id: T8,
      workspace_id: wsB,
      api_key_id: K3,
      model: 'gpt-4o-mini',
      latency_ms: 50,
      metadata: '{"_user":"carol"}',
      created_at: at('08:00'),
    }),
  ];
}

async function setUp() {
  const clock = createManualClock(NOW);
  const t = await startTestServer({ clock });
  const admin = apiClient(t.baseUrl, t.adminKey);
  const { organisationId, workspaceId } = t.server.bootstrap;
  const b = await createWorkspace(admin, 'Team B', 'team-b');
  await createRequestLogRepository(t.server.db).insertBatch(rows(organisationId, workspaceId, b.id));
  const get = async (path: string, client = admin) => {
    const res = await client.get(path);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body;
  };
  return { t, admin, get, b };
}

describe("the reference gateway's other analytics graphs", () => {
  it('users and requests per user, over the window and per hour', async () => {
    const { get } = await setUp();
    const users = await get(`/v1/analytics/graphs/users?${HOURS}`);
    expect(users).toMatchObject({ object: 'analytics-graph', interval: 'hour', summary: { total: 3 } });
    expect(users.data_points).toEqual([
      { timestamp: at('06:00'), total: 2 },
      { timestamp: at('07:00'), total: 1 },
      { timestamp: at('08:00'), total: 1 },
    ]);
    const perUser = await get(`/v1/analytics/graphs/users/requests?${HOURS}`);
    expect(perUser.summary).toEqual({ total: 5, unique: 3, avg: 1.67 });
    expect(perUser.data_points.map((p: { avg: number }) => p.avg)).toEqual([1.5, 1, 1]);
  });

  it('errors per status code, over the window and stacked per hour', async () => {
    const { get } = await setUp();
    const codes = await get(`/v1/analytics/graphs/errors/status-codes?${HOURS.replace('&interval=hour', '')}`);
    expect(codes.summary).toEqual({ total_errors: 3, unique_error_codes: 2 });
    expect(codes.data_points).toEqual([
      { status_code: 500, count: 2 },
      { status_code: 429, count: 1 },
    ]);
    const stacks = await get(`/v1/analytics/graphs/errors/stacks?${HOURS}`);
    expect(stacks.summary).toEqual({ total: 3 });
    expect(stacks.data_points).toEqual([
      { timestamp: at('06:00'), stats: [] },
      {
        timestamp: at('07:00'),
        stats: [
          { response_status_code: 500, count: 2 },
          { response_status_code: 429, count: 1 },
        ],
      },
      { timestamp: at('08:00'), stats: [] },
    ]);
  });

  it('requests rescued by retries and by a fallback, cache latency and the cache summary', async () => {
    const { get } = await setUp();
    const rescued = await get(`/v1/analytics/graphs/requests/rescued?${HOURS}`);
    expect(rescued.summary).toEqual({ retry: 1, fallback: 1 });
    expect(rescued.data_points).toEqual([
      { timestamp: at('06:00'), retry: [{ retry_success_count: 2, count: 1 }], fallback: 0 },
      { timestamp: at('07:00'), retry: [], fallback: 1 },
      { timestamp: at('08:00'), retry: [], fallback: 0 },
    ]);
    const latency = await get(`/v1/analytics/graphs/cache/latency?${HOURS}`);
    expect(latency.summary).toEqual({ avg: 150, avg_exact: 150 });
    // Hours without hits: 0 ms, and null in the exact value (no data).
    expect(latency.data_points.map((p: { avg: number }) => p.avg)).toEqual([150, 0, 0]);
    expect(latency.data_points.map((p: { avg_exact: number | null }) => p.avg_exact)).toEqual([150, null, null]);
    const cache = await get('/v1/analytics/summary/cache');
    // Misses: 300 + 400 + 500 + 100 + 600 + 50 = 1950 ms over 6 → 325; 1 − 150/325.
    expect(cache).toMatchObject({
      object: 'analytics-summary',
      summary: {
        hits: 2,
        avg_latency: 150,
        avg_latency_exact: 150,
        total_requests: 8,
        cache_speedup: 53.85,
        cache_speedup_fraction: 0.5385,
      },
    });
  });

  it('feedback: counts, weighted averages, scores and models of the traces, walled by workspace', async () => {
    const { t, admin, get, b } = await setUp();
    const keyA = await createWorkspaceKey(admin, {
      workspace_id: 'default',
      scopes: ['feedback.create', 'analytics.view'],
    });
    const keyB = await createWorkspaceKey(admin, { workspace_id: b.id, scopes: ['feedback.create', 'analytics.view'] });
    const a = apiClient(t.baseUrl, keyA.key);
    const bb = apiClient(t.baseUrl, keyB.key);
    expect((await a.post('/v1/feedback', { trace_id: T1, value: 8 })).status).toBe(200);
    expect((await a.post('/v1/feedback', { trace_id: T3, value: -2, weight: 0.5 })).status).toBe(200);
    expect((await bb.post('/v1/feedback', { trace_id: T8, value: 10 })).status).toBe(200);
    const window = `start_time=${encodeURIComponent(at('06:00'))}&end_time=${encodeURIComponent(at('09:30'))}`;

    const count = await get(`/v1/analytics/graphs/feedbacks?${window}&interval=hour`);
    expect(count.summary).toEqual({ total: 3 });
    expect(count.data_points.map((p: { total: number }) => p.total)).toEqual([0, 0, 0, 3]);
    const weighted = await get(`/v1/analytics/graphs/feedbacks/weighted?${window}&interval=hour`);
    expect(weighted.summary).toEqual({ avg: 6.8 }); // (8 − 1 + 10) / 2.5
    expect(weighted.data_points.at(-1)).toEqual({ timestamp: at('09:00'), avg: 6.8 });
    const scores = await get(`/v1/analytics/graphs/feedbacks/scores?${window}`);
    expect(scores.summary).toEqual({ total: 3 });
    expect(scores.data_points).toHaveLength(21);
    expect(scores.data_points.filter((p: { total: number }) => p.total > 0)).toEqual([
      { score: -2, total: 1 },
      { score: 8, total: 1 },
      { score: 10, total: 1 },
    ]);
    const models = await get(`/v1/analytics/graphs/feedbacks/ai-models?${window}`);
    expect(models.data_points).toEqual([
      { ai_model: 'claude', total: 1, avg_weighted_feedback: -2 },
      { ai_model: 'gpt-4o', total: 1, avg_weighted_feedback: 8 },
      { ai_model: 'gpt-4o-mini', total: 1, avg_weighted_feedback: 10 },
    ]);
    // A filter on requests keeps the feedback whose trace holds a matching request.
    const claude = await get(`/v1/analytics/graphs/feedbacks?${window}&interval=day&model=claude`);
    expect(claude.summary).toEqual({ total: 1 });

    // Workspace keys see their workspace's feedback only.
    expect((await get(`/v1/analytics/graphs/feedbacks/weighted?${window}`, a)).summary).toEqual({ avg: 4.667 });
    expect((await get(`/v1/analytics/graphs/feedbacks/weighted?${window}`, bb)).summary).toEqual({ avg: 10 });
    const foreign = await a.get(`/v1/analytics/graphs/feedbacks?workspace_id=${b.id}`);
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('WORKSPACE_FORBIDDEN');
  });
});

describe('the groups users, ai-models and metadata/{metadataKey}', () => {
  it('group requests, cost, tokens and feedback, most requests first, paged', async () => {
    const { t, admin, get, b } = await setUp();
    const users = await get('/v1/analytics/groups/users');
    expect(users).toEqual({
      object: 'list',
      total: 3,
      data: [
        // As the reference types them: strings, the cost in cents; dollars in cost_usd.
        { user: 'alice', requests: '2', cost: '0.3', cost_usd: 0.003, object: 'analytics-group' },
        { user: 'bob', requests: '2', cost: '0.05', cost_usd: 0.0005, object: 'analytics-group' },
        { user: 'carol', requests: '1', cost: '0', cost_usd: 0, object: 'analytics-group' },
      ],
    });
    expect(await get('/v1/analytics/groups/users?page_size=1&current_page=1')).toMatchObject({
      total: 3,
      data: [{ user: 'bob' }],
    });
    expect((await get('/v1/analytics/groups/ai-models')).data).toEqual([
      { ai_model: 'gpt-4o', requests: 6, object: 'analytics-group' },
      { ai_model: 'claude', requests: 1, object: 'analytics-group' },
      { ai_model: 'gpt-4o-mini', requests: 1, object: 'analytics-group' },
    ]);

    const keyA = await createWorkspaceKey(admin, {
      workspace_id: 'default',
      scopes: ['feedback.create', 'analytics.view'],
    });
    const a = apiClient(t.baseUrl, keyA.key);
    await a.post('/v1/feedback', { trace_id: T1, value: 8 });
    await a.post('/v1/feedback', { trace_id: T3, value: -2, weight: 0.5 });
    const teams = await get('/v1/analytics/groups/metadata/team');
    expect(teams).toEqual({
      object: 'list',
      total: 2,
      data: [
        {
          metadata_value: 'a',
          requests: 2,
          cost: 0.15,
          cost_usd: 0.0015,
          avg_tokens: 20,
          avg_weighted_feedback: 4.667,
          requests_with_feedback: 2,
          last_seen: at('06:20'),
          object: 'analytics-group',
        },
        {
          metadata_value: 'b',
          requests: 1,
          cost: 0.2,
          cost_usd: 0.002,
          avg_tokens: 50,
          avg_weighted_feedback: null,
          requests_with_feedback: 0,
          last_seen: at('06:10'),
          object: 'analytics-group',
        },
      ],
    });
    // A key no request carries is an empty list; filters apply as on every analytics route.
    expect(await get('/v1/analytics/groups/metadata/nobody-sets-this')).toEqual({ object: 'list', total: 0, data: [] });
    expect((await get(`/v1/analytics/groups/users?workspace_id=${b.id}`)).data.map((g: any) => g.user)).toEqual([
      'carol',
    ]);
    // A workspace key sees its workspace only.
    expect((await get('/v1/analytics/groups/users', a)).data.map((g: any) => g.user)).toEqual(['alice', 'bob']);
  });

  it("take the reference's names of the window and workspace filters", async () => {
    const { get, admin } = await setUp();
    const theirs = `time_of_generation_min=${encodeURIComponent(at('06:00'))}&time_of_generation_max=${encodeURIComponent(at('08:59'))}`;
    const ours = `start_time=${encodeURIComponent(at('06:00'))}&end_time=${encodeURIComponent(at('08:59'))}`;
    expect(await get(`/v1/analytics/graphs/users?${theirs}&workspace_slug=default`)).toEqual(
      await get(`/v1/analytics/graphs/users?${ours}&workspace_id=default`),
    );
    expect((await get(`/v1/analytics/groups/users?workspace_slug=team-b`)).data.map((g: any) => g.user)).toEqual([
      'carol',
    ]);
    const both = await admin.get(`/v1/analytics/graphs/requests?${ours}&time_of_generation_min=2026-05-01T00:00:00Z`);
    expect(both.status).toBe(400);
    expect(both.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'time_of_generation_min' });
  });

  it("take the reference's per-request filters: each keeps the requests it names and leaves out the rest", async () => {
    const { get, admin, t } = await setUp();
    const total = async (query: string) =>
      (await get(`/v1/analytics/graphs/requests?${HOURS}&${query}`)).summary.total as number;
    // Tokens: 30, 50, 10 on the first three requests.
    expect(await total('total_units_min=30')).toBe(2);
    expect(await total('total_units_max=20')).toBe(1);
    // Cost in cents: 0.1, 0.2 and 0.05.
    expect(await total('cost_min=0.1')).toBe(2);
    expect(await total('cost_min=0.1&cost_max=0.15')).toBe(1);
    expect(await total('cost_min=5')).toBe(0);
    expect(await total('prompt_token_min=1')).toBe(0);
    expect(await total('completion_token_max=1000')).toBe(0);
    expect(await total(`api_key_ids=${K3}`)).toBe(1);
    expect(await total(`api_key_ids=${K1},${K3}`)).toBe(8);
    expect(await total(`api_key_ids=${randomUUID()}`)).toBe(0);
    expect(await total('ai_org_model=anthropic__claude')).toBe(1);
    expect(await total('ai_org_model=anthropic__claude,openai__gpt-4o-mini')).toBe(2);
    expect(await total('ai_org_model=openai__claude')).toBe(0);
    // No pair at all matches nothing, as an empty api_key_ids does.
    expect(await total('ai_org_model=')).toBe(0);
    expect(await total('ai_org_model=%20,,')).toBe(0);
    expect((await admin.get('/v1/analytics/summary?ai_org_model=')).status).toBe(200);
    expect(await total(`trace_id=${T3}`)).toBe(1);
    expect(await total('trace_id=no-such-trace')).toBe(0);
    expect(await total('span_id=no-such-span')).toBe(0);
    expect(await total('configs=no-such-config')).toBe(0);
    expect(await total('prompt_slug=no-such-prompt')).toBe(0);
    expect(await total('virtual_keys=no-such-key')).toBe(0);

    // Feedback on T1 (8) and T3 (−2): the trace's weighted average.
    const keyA = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['feedback.create'] });
    const a = apiClient(t.baseUrl, keyA.key);
    expect((await a.post('/v1/feedback', { trace_id: T1, value: 8 })).status).toBe(200);
    expect((await a.post('/v1/feedback', { trace_id: T3, value: -2 })).status).toBe(200);
    expect(await total('weighted_feedback_min=0')).toBe(1);
    expect(await total('weighted_feedback_max=0')).toBe(1);
    expect(await total('weighted_feedback_min=-10')).toBe(2);
    expect(await total('weighted_feedback_min=9')).toBe(0);
    // The cost graph says the same, in cents and dollars.
    expect((await get(`/v1/analytics/graphs/cost?${HOURS}&cost_min=0.1`)).summary).toMatchObject({
      total: 0.3,
      total_usd: 0.003,
    });

    for (const [query, param] of [
      ['cost_min=cheap', 'cost_min'],
      ['total_units_min=1.5', 'total_units_min'],
      ['weighted_feedback_max=11', 'weighted_feedback_max'],
      ['ai_org_model=gpt-4o', 'ai_org_model'],
    ]) {
      const refused = await admin.get(`/v1/analytics/graphs/requests?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'INVALID_REQUEST', param });
    }
  });

  it('refuses what it does not know with the parameter named', async () => {
    const { admin } = await setUp();
    const unknown = await admin.get('/v1/analytics/groups/users?columns=cost');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('INVALID_REQUEST');
    // Any key is taken literally, quotes and dots included (it is a parameter, never SQL or a JSON path).
    const odd = await admin.get(`/v1/analytics/groups/metadata/${encodeURIComponent('a"b.c\'d')}`);
    expect(odd.status).toBe(200);
    expect(odd.body.total).toBe(0);
    const interval = await admin.get('/v1/analytics/graphs/errors/status-codes?interval=hour');
    expect(interval.status).toBe(400);
    // A window far into the future would be millions of empty points: refused, for every graph.
    for (const path of ['/v1/analytics/graphs/cost', '/v1/analytics/graphs/errors', '/v1/analytics/graphs/feedbacks']) {
      const far = await admin.get(`${path}?start_time=2020-01-01T00:00:00Z&end_time=9999-12-31T23:59:59Z`);
      expect(far.status, path).toBe(400);
      expect(far.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'end_time' });
    }
    const hourly = await admin.get(
      `/v1/analytics/graphs/cost?interval=hour&start_time=2020-01-01T00:00:00Z&end_time=${new Date(Date.now() + 500 * 86_400_000).toISOString()}`,
    );
    expect(hourly.status).toBe(400);
    expect(hourly.body.error.message).toMatch(/interval=day/);
    // Daily, the same window is a few hundred points.
    const daily = await admin.get(
      `/v1/analytics/graphs/cost?interval=day&start_time=2020-01-01T00:00:00Z&end_time=${new Date(Date.now() + 500 * 86_400_000).toISOString()}`,
    );
    expect(daily.status).toBe(200);
    expect(daily.body.data_points.length).toBeGreaterThan(500);
  });
});
