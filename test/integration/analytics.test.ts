import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import {
  createRequestLogRepository,
  LATENCY_RELATIVE_ERROR,
  type RequestLogInsert,
} from '../../src/storage/repositories/request-logs.js';
import { createWorkspace } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const NOW = Date.parse('2026-06-01T09:00:00Z');
const at = (hhmm: string) => `2026-06-01T${hhmm}:00.000Z`;
const K1 = randomUUID();
const K2 = randomUUID();
const K3 = randomUUID();
const CFG = randomUUID();

/**
 * Percentiles come from latency histograms: within LATENCY_RELATIVE_ERROR (2.44 %) of the exact
 * nearest-rank value, and exact at rank 1 and rank n (the smallest and largest latency).
 */
const near = (exact: number) => ({
  asymmetricMatch: (actual: unknown) =>
    typeof actual === 'number' && Math.abs(actual - exact) <= exact * LATENCY_RELATIVE_ERROR,
  toString: () => `within ${(LATENCY_RELATIVE_ERROR * 100).toFixed(2)} % of ${exact}`,
  toAsymmetricMatcher: () => `near(${exact})`,
});

/**
 * A known set of rows, written through the repository so that latencies are exact:
 * gpt-4o (3 rows, key K1), claude (2 rows, key K2) in the default workspace; gpt-4o-mini
 * (20 rows, key K3, latencies 10..200) in workspace B. The numbers in the tests below are
 * worked out by hand from this table.
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
    cache_status: 'DISABLED',
    metadata: null,
    created_at: at('06:00'),
    retry_count: 0,
    ...over,
  });
  const tokens = (p: number, c: number) => ({ prompt_tokens: p, completion_tokens: c, total_tokens: p + c });
  return [
    base({
      credential_source: 'provider:openai-prod',
      latency_ms: 100,
      ...tokens(10, 20),
      cost: 0.001,
      cache_status: 'HIT',
      metadata: '{"env":"prod","team":"a"}',
      config_id: CFG,
    }),
    base({
      credential_source: 'provider:openai-prod',
      latency_ms: 200,
      ...tokens(20, 30),
      cost: 0.002,
      cache_status: 'MISS',
      metadata: '{"env":"prod"}',
      created_at: at('06:10'),
    }),
    base({ status_code: 500, is_success: 0, latency_ms: 300, created_at: at('07:00') }),
    base({
      api_key_id: K2,
      provider: 'anthropic',
      credential_source: 'virtual_key:claude',
      model: 'claude',
      latency_ms: 400,
      ...tokens(5, 5),
      cost: 0.0005,
      cache_status: 'SEMANTIC_HIT',
      metadata: '{"env":"dev"}',
      created_at: at('07:05'),
    }),
    base({
      api_key_id: K2,
      provider: 'anthropic',
      credential_source: 'virtual_key:claude',
      model: 'claude',
      status_code: 429,
      is_success: 0,
      latency_ms: 500,
      metadata: '{"env":"dev"}',
      created_at: at('07:30'),
    }),
    ...Array.from({ length: 20 }, (_, i) =>
      base({
        workspace_id: wsB,
        api_key_id: K3,
        credential_source: 'custom_host',
        model: 'gpt-4o-mini',
        latency_ms: 10 * (i + 1),
        ...tokens(60, 40),
        cost: 0.0001,
        created_at: at(`08:${String(i).padStart(2, '0')}`),
      }),
    ),
  ];
}

async function setUp() {
  const clock = createManualClock(NOW);
  const t = await startTestServer({ clock });
  const admin = apiClient(t.baseUrl, t.adminKey);
  const { organisationId, workspaceId } = t.server.bootstrap;
  const b = await createWorkspace(admin, 'Team B', 'team-b');
  const repo = createRequestLogRepository(t.server.db);
  await repo.insertBatch(rows(organisationId, workspaceId, b.id));
  const get = async (path: string) => {
    const res = await admin.get(path);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body;
  };
  const pairs = async (path: string, field: string) => (await get(path)).data.map((g: any) => [g[field], g.requests]);
  return { t, clock, admin, repo, get, pairs, organisationId, workspaceId, b };
}

describe('analytics over known rows', () => {
  it('groups by every dimension, most requests first, in the list shape', async () => {
    const { get, pairs, workspaceId, b } = await setUp();
    const byModel = await get('/v1/analytics/groups/model');
    expect(byModel).toEqual({
      object: 'list',
      total: 3,
      data: [
        { model: 'gpt-4o-mini', requests: 20, object: 'analytics-group' },
        { model: 'gpt-4o', requests: 3, object: 'analytics-group' },
        { model: 'claude', requests: 2, object: 'analytics-group' },
      ],
    });
    expect(await pairs('/v1/analytics/groups/ai_service', 'ai_service')).toEqual([
      ['openai', 23],
      ['anthropic', 2],
    ]);
    expect(await pairs('/v1/analytics/groups/status_code', 'status_code')).toEqual([
      [200, 23],
      [429, 1],
      [500, 1],
    ]);
    expect(await pairs('/v1/analytics/groups/api_key', 'api_key')).toEqual([
      [K3, 20],
      [K1, 3],
      [K2, 2],
    ]);
    expect(await pairs('/v1/analytics/groups/config', 'config')).toEqual([
      [null, 24],
      [CFG, 1],
    ]);
    expect(await pairs('/v1/analytics/groups/provider', 'provider')).toEqual([
      ['custom_host', 20],
      ['provider:openai-prod', 2],
      ['virtual_key:claude', 2],
      ['direct', 1],
    ]);
    expect(await pairs('/v1/analytics/groups/prompt', 'prompt')).toEqual([[null, 25]]);
    const byWorkspace = await get('/v1/analytics/groups/workspace');
    expect(byWorkspace.data).toEqual([
      { workspace: b.id, requests: 20, workspace_slug: 'team-b', workspace_name: 'Team B', object: 'analytics-group' },
      {
        workspace: workspaceId,
        requests: 5,
        workspace_slug: 'default',
        workspace_name: expect.any(String),
        object: 'analytics-group',
      },
    ]);
    // /v1/logs/groups answers the same.
    expect(await get('/v1/logs/groups/model')).toEqual(byModel);
    // Pages are 0-based; total counts every group.
    expect(await get('/v1/analytics/groups/model?page_size=1&current_page=1')).toMatchObject({
      total: 3,
      data: [{ model: 'gpt-4o', requests: 3 }],
    });
  });

  it('computes every column by hand', async () => {
    const { get } = await setUp();
    const all =
      'cost,total_tokens,avg_tokens,avg_input_tokens,avg_output_tokens,avg_latency,p95_latency,p99_latency,success_rate,error_count,cache_hit_rate,last_seen,first_seen';
    const body = await get(`/v1/analytics/groups/model?columns=${all}`);
    const byModel = Object.fromEntries(body.data.map((g: any) => [g.model, g]));
    expect(byModel['gpt-4o']).toEqual({
      model: 'gpt-4o',
      requests: 3,
      cost: 0.003,
      total_tokens: 80,
      avg_tokens: 40,
      avg_input_tokens: 15,
      avg_output_tokens: 25,
      avg_latency: 200,
      p95_latency: 300,
      p99_latency: 300,
      success_rate: 0.6667,
      error_count: 1,
      cache_hit_rate: 0.3333,
      last_seen: at('07:00'),
      first_seen: at('06:00'),
      object: 'analytics-group',
    });
    expect(byModel.claude).toEqual({
      model: 'claude',
      requests: 2,
      cost: 0.0005,
      total_tokens: 10,
      avg_tokens: 10,
      avg_input_tokens: 5,
      avg_output_tokens: 5,
      avg_latency: 450,
      p95_latency: 500,
      p99_latency: 500,
      success_rate: 0.5,
      error_count: 1,
      cache_hit_rate: 0.5,
      last_seen: at('07:30'),
      first_seen: at('07:05'),
      object: 'analytics-group',
    });
    // Latencies 10, 20, …, 200: nearest rank 19 of 20 for p95 (approximate), 20 for p99 (the largest, exact).
    expect(byModel['gpt-4o-mini']).toEqual({
      model: 'gpt-4o-mini',
      requests: 20,
      cost: 0.002,
      total_tokens: 2000,
      avg_tokens: 100,
      avg_input_tokens: 60,
      avg_output_tokens: 40,
      avg_latency: 105,
      p95_latency: near(190),
      p99_latency: 200,
      success_rate: 1,
      error_count: 0,
      cache_hit_rate: 0,
      last_seen: at('08:19'),
      first_seen: at('08:00'),
      object: 'analytics-group',
    });
    // Only the columns asked for, in that order; repeats ignored.
    expect(Object.keys((await get('/v1/analytics/groups/model?columns=error_count,cost,error_count')).data[0])).toEqual(
      ['model', 'requests', 'error_count', 'cost', 'object'],
    );
  });

  it('summarises the window: requests, cost, tokens, latency percentiles, errors, cache hits', async () => {
    const { get } = await setUp();
    const body = await get('/v1/analytics/summary');
    expect(body.object).toBe('analytics-summary');
    expect(body.end_time).toBe(new Date(NOW).toISOString());
    expect(body.start_time).toBe(new Date(NOW - 7 * 86_400_000).toISOString());
    // 25 latencies: 10..200 by 10 plus 100, 200, 300, 400, 500. Ranks 13, 23, 24 (approximate), 25 (exact).
    expect(body.summary).toEqual({
      requests: 25,
      successes: 23,
      errors: 2,
      success_rate: 0.92,
      error_rate: 0.08,
      cost: 0.0055,
      cost_currency: 'USD',
      total_tokens: 2090,
      prompt_tokens: 1235,
      completion_tokens: 855,
      avg_tokens: 90.87,
      avg_latency: 144,
      p50_latency: near(120),
      p90_latency: near(300),
      p95_latency: near(400),
      p99_latency: 500,
      cache_hits: 2,
      cache_hit_rate: 0.08,
      first_seen: at('06:00'),
      last_seen: at('08:19'),
    });
  });

  it('applies every filter', async () => {
    const { get, pairs, b } = await setUp();
    const requests = async (query: string) => (await get(`/v1/analytics/summary?${query}`)).summary.requests;
    expect(await pairs('/v1/analytics/groups/status_code?model=gpt-4o', 'status_code')).toEqual([
      [200, 2],
      [500, 1],
    ]);
    expect(await requests('status_code=500,429')).toBe(2);
    expect(await requests('status_code=200')).toBe(23);
    expect(await requests(`metadata=${encodeURIComponent('{"env":"prod"}')}`)).toBe(2);
    expect(await requests(`metadata=${encodeURIComponent('{"env":"dev"}')}`)).toBe(2);
    expect(await requests(`metadata=${encodeURIComponent('{"env":"prod","team":"a"}')}`)).toBe(1);
    expect(await requests(`metadata=${encodeURIComponent('{"env":"staging"}')}`)).toBe(0);
    expect(await requests('provider=anthropic')).toBe(2);
    expect(await requests('workspace_id=team-b')).toBe(20);
    expect(await requests(`workspace_id=${b.id}&model=gpt-4o`)).toBe(0);
    expect(await requests(`api_key_id=${K1}`)).toBe(3);
    expect(await requests('model=no-such-model')).toBe(0);
    // Bounds are inclusive.
    expect(await requests(`start_time=${at('07:00')}&end_time=${at('07:30')}`)).toBe(3);
    expect(
      await pairs(`/v1/analytics/groups/model?start_time=${at('07:00')}&end_time=${at('07:30')}&columns=cost`, 'model'),
    ).toEqual([
      ['claude', 2],
      ['gpt-4o', 1],
    ]);
    // Parts of hours at both edges (request_logs) around a whole hour (rollups): 06:10; 07:00, 07:05, 07:30; 08:00…08:10.
    expect(await requests(`start_time=${at('06:05')}&end_time=${at('08:10')}`)).toBe(1 + 3 + 11);
    const edges = await get(
      `/v1/analytics/groups/model?start_time=${at('06:05')}&end_time=${at('08:10')}&columns=cost,avg_latency,first_seen,last_seen`,
    );
    expect(edges.data).toEqual([
      {
        model: 'gpt-4o-mini',
        requests: 11,
        cost: 0.0011,
        avg_latency: 60,
        first_seen: at('08:00'),
        last_seen: at('08:10'),
        object: 'analytics-group',
      },
      {
        model: 'claude',
        requests: 2,
        cost: 0.0005,
        avg_latency: 450,
        first_seen: at('07:05'),
        last_seen: at('07:30'),
        object: 'analytics-group',
      },
      {
        model: 'gpt-4o',
        requests: 2,
        cost: 0.002,
        avg_latency: 250,
        first_seen: at('06:10'),
        last_seen: at('07:00'),
        object: 'analytics-group',
      },
    ]);
    // With a metadata filter the same window is read from request_logs alone.
    expect(
      await requests(
        `start_time=${at('06:05')}&end_time=${at('08:10')}&metadata=${encodeURIComponent('{"env":"prod"}')}`,
      ),
    ).toBe(1);
  });

  it('defaults to the last 7 days, reaches back METRICS_RETENTION_DISPLAY through rollups, and LOG_RETENTION_DISPLAY with a metadata filter', async () => {
    const { get, repo, organisationId, workspaceId } = await setUp();
    const old = (daysAgo: number, metadata: string | null = null): RequestLogInsert => ({
      id: randomUUID(),
      trace_id: randomUUID(),
      request_id: randomUUID(),
      organisation_id: organisationId,
      workspace_id: workspaceId,
      api_key_id: K1,
      provider: 'openai',
      credential_source: 'direct',
      model: 'old',
      endpoint_type: 'chatComplete',
      method: 'POST',
      path: '/v1/chat/completions',
      status_code: 200,
      is_success: 1,
      is_stream: 0,
      latency_ms: 1,
      cost_currency: 'USD',
      cache_status: 'DISABLED',
      retry_count: 0,
      metadata,
      created_at: new Date(NOW - daysAgo * 86_400_000).toISOString(),
    });
    await repo.insertBatch([old(8), old(100, '{"env":"prod"}'), old(400)]);
    const summary = async (query: string) => get(`/v1/analytics/summary?${query}`);
    const ago = (days: number, minutes = 0) => new Date(NOW - days * 86_400_000 - minutes * 60_000).toISOString();
    expect((await summary('')).summary.requests).toBe(25);
    expect((await summary(`start_time=${ago(10)}`)).summary.requests).toBe(26);
    // 100 days ago is past the 90 days of request logs, but within the 365 days of rollups.
    const far = await summary(`start_time=${ago(120)}`);
    expect(far.summary.requests).toBe(27);
    expect(far.start_time).toBe(ago(120));
    // Older than 365 days: the window starts on the first UTC day whose rollups are kept.
    const farthest = await summary(`start_time=${ago(500)}`);
    expect(farthest.summary.requests).toBe(27);
    expect(farthest.start_time).toBe('2025-06-01T00:00:00.000Z');
    // An edge older than LOG_RETENTION_DISPLAY inside an hour is widened to the hour (its rows may be gone).
    expect((await summary(`start_time=${ago(100, 30)}`)).start_time).toBe(
      new Date(NOW - 100 * 86_400_000 - 3_600_000).toISOString(),
    );
    // A metadata filter reads request logs: never before LOG_RETENTION_DISPLAY.
    const prod = await summary(`start_time=${ago(120)}&metadata=${encodeURIComponent('{"env":"prod"}')}`);
    expect(prod.summary.requests).toBe(2);
    expect(prod.start_time).toBe(ago(90));
  });

  it('graphs per hour and per day, with zero-filled buckets', async () => {
    const { get } = await setUp();
    const range = `start_time=${at('05:00')}&end_time=${at('09:00')}`;
    const requests = await get(`/v1/analytics/graphs/requests?${range}`);
    expect(requests).toMatchObject({ object: 'analytics-graph', interval: 'hour', summary: { total: 25 } });
    expect(requests.data_points).toEqual([
      { timestamp: at('05:00'), total: 0 },
      { timestamp: at('06:00'), total: 2 },
      { timestamp: at('07:00'), total: 3 },
      { timestamp: at('08:00'), total: 20 },
      { timestamp: at('09:00'), total: 0 },
    ]);
    const latency = await get(`/v1/analytics/graphs/latency?${range}`);
    // The reference's units: whole milliseconds, with the exact value beside each (`_exact`).
    expect(latency.summary).toMatchObject({
      avg: 144,
      avg_exact: 144,
      p50: near(120),
      p90: near(300),
      p95: near(400),
      p99: 500,
      p99_exact: 500,
    });
    // No data: 0 in the reference's field, null in its companion.
    expect(latency.data_points[0]).toEqual({
      timestamp: at('05:00'),
      ...{ avg: 0, p50: 0, p90: 0, p95: 0, p99: 0 },
      ...{ avg_exact: null, p50_exact: null, p90_exact: null, p95_exact: null, p99_exact: null },
    });
    expect(latency.data_points[1]).toEqual({
      timestamp: at('06:00'),
      ...{ avg: 150, p50: 100, p90: 200, p95: 200, p99: 200 },
      ...{ avg_exact: 150, p50_exact: 100, p90_exact: 200, p95_exact: 200, p99_exact: 200 },
    });
    // Costs in cents, dollars in `_usd`.
    const cost = await get(`/v1/analytics/graphs/cost?${range}`);
    expect(cost.data_points[2]).toEqual({
      timestamp: at('07:00'),
      total: 0.05,
      avg: 0.0166666666667,
      total_usd: 0.0005,
      avg_usd: 0.000166666666667,
    });
    expect(cost.data_points[0]).toEqual({ timestamp: at('05:00'), total: 0, avg: 0, total_usd: 0, avg_usd: null });
    expect((await get(`/v1/analytics/graphs/tokens?${range}`)).summary).toEqual({ total: 2090, avg: 90.87 });
    expect((await get(`/v1/analytics/graphs/errors?${range}`)).data_points.map((p: any) => p.total)).toEqual([
      0, 0, 2, 0, 0,
    ]);
    // Rates in percent, fractions in `_fraction` (null: no requests in the bucket).
    const rates = (await get(`/v1/analytics/graphs/errors/rate?${range}`)).data_points;
    expect(rates.map((p: any) => p.rate)).toEqual([0, 0, 66.67, 0, 0]);
    expect(rates.map((p: any) => p.rate_fraction)).toEqual([null, 0, 0.6667, 0, null]);
    const cache = await get(`/v1/analytics/graphs/cache/hit-rate?${range}`);
    expect(cache.summary).toEqual({ total: 2, rate: 8, rate_fraction: 0.08 });
    expect(cache.data_points[1]).toEqual({
      timestamp: at('06:00'),
      total: 1,
      simple_hits: 1,
      semantic_hits: 0,
      rate: 50,
      rate_fraction: 0.5,
      // Rows written without a recorded saving (hits logged before migration 0033) save nothing.
      cumulative_simple_cache_savings: 0,
      cumulative_simple_cache_savings_usd: 0,
      cumulative_semantic_cache_savings: 0,
      cumulative_semantic_cache_savings_usd: 0,
    });
    expect(cache.data_points[2]).toMatchObject({
      simple_hits: 0,
      semantic_hits: 1,
      rate: 33.33,
      rate_fraction: 0.3333,
    });
    // The default window (7 days) is drawn per day: 8 buckets, today's holds everything.
    const daily = await get('/v1/analytics/graphs/requests');
    expect(daily.interval).toBe('day');
    expect(daily.data_points).toHaveLength(8);
    expect(daily.data_points.at(-1)).toEqual({ timestamp: '2026-06-01T00:00:00.000Z', total: 25 });
    expect(daily.data_points.slice(0, -1).every((p: any) => p.total === 0)).toBe(true);
  });

  it('counts rows as soon as they are written; rollups keep counting rows deleted from request_logs', async () => {
    const { get, repo, t, organisationId, workspaceId } = await setUp();
    expect((await get('/v1/analytics/summary')).summary.requests).toBe(25);
    await repo.insertBatch([
      {
        id: randomUUID(),
        trace_id: randomUUID(),
        request_id: randomUUID(),
        organisation_id: organisationId,
        workspace_id: workspaceId,
        api_key_id: K1,
        provider: 'openai',
        credential_source: 'direct',
        model: 'late',
        endpoint_type: 'chatComplete',
        method: 'POST',
        path: '/v1/chat/completions',
        status_code: 200,
        is_success: 1,
        is_stream: 0,
        latency_ms: 1,
        cost_currency: 'USD',
        cache_status: 'DISABLED',
        retry_count: 0,
        created_at: at('08:59'),
      },
    ]);
    expect((await get('/v1/analytics/summary')).summary.requests).toBe(26);
    // Rollups are sums of what was logged: deleting log rows (as retention does) leaves them,
    // while a metadata filter, which reads request_logs, no longer finds the deleted rows.
    await t.server.db.deleteFrom('request_logs').where('model', '=', 'claude').execute();
    expect((await get('/v1/analytics/summary')).summary.requests).toBe(26);
    expect((await get(`/v1/analytics/summary?metadata=${encodeURIComponent('{"env":"dev"}')}`)).summary.requests).toBe(
      0,
    );
  });

  it('names an unknown group-by or column, and refuses malformed filters', async () => {
    const { admin } = await setUp();
    const unknownGroup = await admin.get('/v1/analytics/groups/colour');
    expect(unknownGroup.status).toBe(400);
    expect(unknownGroup.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'groupBy' });
    expect(unknownGroup.body.error.message).toContain('colour');
    const unknownColumn = await admin.get('/v1/logs/groups/model?columns=cost,bogus');
    expect(unknownColumn.status).toBe(400);
    expect(unknownColumn.body.error).toMatchObject({ param: 'columns' });
    expect(unknownColumn.body.error.message).toContain('bogus');
    for (const [query, param] of [
      ['metadata=notjson', 'metadata'],
      ['metadata=%7B%22a%22%3A1%7D', 'metadata'],
      ['status_code=abc', 'status_code'],
      [`start_time=${at('08:00')}&end_time=${at('07:00')}`, 'start_time'],
    ]) {
      const res = await admin.get(`/v1/analytics/summary?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.param, query).toBe(param);
    }
    expect((await admin.get('/v1/analytics/graphs/requests?interval=week')).status).toBe(400);
  });
});
