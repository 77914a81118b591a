import { describe, expect, it } from 'vitest';
import { newTimeOrderedId } from '../../src/lib/ids.js';
import { createRequestLogRepository, type RequestLogInsert } from '../../src/storage/repositories/request-logs.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

/** A stored request log row, as the gateway writes one, for the parts of a trace. */
function logRow(
  base: { organisationId: string; workspaceId: string; apiKeyId: string },
  overrides: Partial<RequestLogInsert>,
): RequestLogInsert {
  return {
    id: newTimeOrderedId(),
    trace_id: 'trace',
    request_id: newTimeOrderedId(),
    organisation_id: base.organisationId,
    workspace_id: base.workspaceId,
    api_key_id: base.apiKeyId,
    provider: 'openai',
    credential_source: 'direct',
    model: 'gpt-4o-mini',
    endpoint_type: 'chatComplete',
    method: 'POST',
    path: '/v1/chat/completions',
    status_code: 200,
    is_success: 1,
    is_stream: 0,
    latency_ms: 100,
    prompt_tokens: 10,
    completion_tokens: 5,
    total_tokens: 15,
    cost: 0.001,
    cost_currency: 'USD',
    cache_status: 'DISABLED',
    created_at: '2026-01-01T00:00:00.000Z',
    retry_count: 0,
    ...overrides,
  };
}

async function context(t: TestServer) {
  const admin = apiClient(t.baseUrl, t.adminKey);
  const org = await t.server.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
  const def = await t.server.db
    .selectFrom('workspaces')
    .select('id')
    .where('slug', '=', 'default')
    .executeTakeFirstOrThrow();
  const adminKeyRow = await t.server.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow();
  return {
    admin,
    organisationId: org.id,
    defaultWorkspaceId: def.id,
    adminKeyId: adminKeyRow.id,
    repo: createRequestLogRepository(t.server.db),
  };
}

describe('traces', () => {
  it('lists traces with their sums and shows one as spans, parent links and timing included', async () => {
    const t = await startTestServer();
    const c = await context(t);
    const base = { organisationId: c.organisationId, workspaceId: c.defaultWorkspaceId, apiKeyId: c.adminKeyId };
    await c.repo.insertBatch([
      logRow(base, {
        trace_id: 'checkout-1',
        span_id: 'root',
        span_name: 'checkout',
        created_at: '2026-01-01T10:00:00.000Z',
        latency_ms: 1000,
      }),
      logRow(base, {
        trace_id: 'checkout-1',
        span_id: 'plan',
        parent_span_id: 'root',
        span_name: 'plan',
        created_at: '2026-01-01T10:00:00.100Z',
        latency_ms: 300,
        model: 'gpt-4o',
        cost: 0.01,
      }),
      logRow(base, {
        trace_id: 'checkout-1',
        span_id: 'answer',
        parent_span_id: 'root',
        span_name: 'answer',
        created_at: '2026-01-01T10:00:00.500Z',
        latency_ms: 700,
        status_code: 502,
        is_success: 0,
        error_code: 'UPSTREAM_ERROR',
        cost: null,
        total_tokens: null,
        prompt_tokens: null,
        completion_tokens: null,
      }),
      logRow(base, { trace_id: 'other', created_at: '2026-01-02T09:00:00.000Z' }),
    ]);

    const list = await c.admin.get('/v1/traces');
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    expect(list.body.data.map((trace: { trace_id: string }) => trace.trace_id)).toEqual(['other', 'checkout-1']);
    expect(list.body.data[1]).toMatchObject({
      trace_id: 'checkout-1',
      name: 'checkout',
      requests: 3,
      errors: 1,
      duration_ms: 1200,
      total_tokens: 30,
      object: 'trace',
    });
    expect(list.body.data[1].cost).toBeCloseTo(0.011);
    const ranged = await c.admin.get('/v1/traces?start_time=2026-01-02T00:00:00Z');
    expect(ranged.body.data.map((trace: { trace_id: string }) => trace.trace_id)).toEqual(['other']);
    const paged = await c.admin.get('/v1/traces?page_size=1&current_page=1');
    expect(paged.body).toMatchObject({ total: 2, data: [{ trace_id: 'checkout-1' }] });

    const trace = await c.admin.get('/v1/traces/checkout-1');
    expect(trace.status).toBe(200);
    expect(trace.body).toMatchObject({
      trace_id: 'checkout-1',
      name: 'checkout',
      started_at: '2026-01-01T10:00:00.000Z',
      ended_at: '2026-01-01T10:00:01.200Z',
      duration_ms: 1200,
      requests: 3,
      errors: 1,
      truncated: false,
      feedback: [],
      weighted_feedback: null,
      object: 'trace',
    });
    expect(
      trace.body.spans.map((s: { span_id: string; parent_span_id: string | null }) => [s.span_id, s.parent_span_id]),
    ).toEqual([
      ['root', null],
      ['plan', 'root'],
      ['answer', 'root'],
    ]);
    expect(trace.body.spans[2]).toMatchObject({
      span_name: 'answer',
      status_code: 502,
      is_success: false,
      error_code: 'UPSTREAM_ERROR',
      duration_ms: 700,
      started_at: '2026-01-01T10:00:00.500Z',
      ended_at: '2026-01-01T10:00:01.200Z',
      model: 'gpt-4o-mini',
      cost: null,
    });
    expect(trace.body.spans[1]).toMatchObject({
      model: 'gpt-4o',
      cost: 0.01,
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
    });
    // A request sent without a span id is a span named by its log id.
    const lone = await c.admin.get('/v1/traces/other');
    expect(lone.body.spans[0].span_id).toBe(lone.body.spans[0].log_id);

    expect((await c.admin.get('/v1/traces/no-such-trace')).status).toBe(404);
  });

  it('applies workspace reach and data visibility: a member whose visibility is off sees only its own keys', async () => {
    const t = await startTestServer();
    const c = await context(t);
    const team = await createWorkspace(c.admin, 'Team', 'team');
    const memberId = await addUser(t.server.db, c.organisationId, 'member', [{ workspaceId: team.id, role: 'member' }]);
    const memberKey = await createWorkspaceKey(c.admin, {
      workspace_id: team.id,
      user_id: memberId,
      scopes: ['logs.list', 'logs.view'],
    });
    const teamService = await c.admin.post('/v1/api-keys/workspace/service', {
      name: 'svc',
      workspace_id: team.id,
      scopes: ['logs.list', 'logs.view'],
    });
    await c.repo.insertBatch([
      logRow(
        { organisationId: c.organisationId, workspaceId: c.defaultWorkspaceId, apiKeyId: c.adminKeyId },
        { trace_id: 'default-trace' },
      ),
      logRow(
        { organisationId: c.organisationId, workspaceId: team.id, apiKeyId: memberKey.id },
        { trace_id: 'member-trace' },
      ),
      logRow(
        { organisationId: c.organisationId, workspaceId: team.id, apiKeyId: teamService.body.id },
        { trace_id: 'service-trace' },
      ),
    ]);
    const member = apiClient(t.baseUrl, memberKey.key);
    const ids = async (client: ReturnType<typeof apiClient>) =>
      (await client.get('/v1/traces')).body.data.map((trace: { trace_id: string }) => trace.trace_id).sort();

    expect(await ids(member)).toEqual(['member-trace', 'service-trace']);
    expect((await member.get('/v1/traces/default-trace')).status).toBe(404);
    expect((await member.get('/v1/traces?workspace_id=default')).body.error.code).toBe('WORKSPACE_FORBIDDEN');

    expect((await c.admin.put('/v1/settings/security', { membersViewAllData: false })).status).toBe(200);
    expect(await ids(member)).toEqual(['member-trace']);
    expect((await member.get('/v1/traces/service-trace')).status).toBe(404);
    expect((await member.get('/v1/traces/member-trace')).status).toBe(200);
    expect(await ids(c.admin)).toEqual(['default-trace', 'member-trace', 'service-trace']);

    const noScope = await createWorkspaceKey(c.admin, { workspace_id: team.id, scopes: ['completions.write'] });
    expect((await apiClient(t.baseUrl, noScope.key).get('/v1/traces')).body.error.code).toBe('MISSING_SCOPE');
  });

  it('builds spans from the gateway headers x-service-trace-id, x-service-span-id, x-service-parent-span-id, x-service-span-name', async () => {
    const gw = await startGateway();
    const chat = (headers: Record<string, string>) =>
      gw
        .openai({ ...gw.viaMock, 'x-service-trace-id': 'agent-run-7', ...headers })
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    await chat({ 'x-service-span-id': 'step-1', 'x-service-span-name': 'agent' });
    await chat({
      'x-service-span-id': 'step-2',
      'x-service-parent-span-id': 'step-1',
      'x-service-span-name': 'tool call',
    });
    const trace = await gw.admin.get('/v1/traces/agent-run-7');
    expect(trace.status).toBe(200);
    expect(
      trace.body.spans.map((s: { span_id: string; parent_span_id: string | null; span_name: string }) => [
        s.span_id,
        s.parent_span_id,
        s.span_name,
      ]),
    ).toEqual([
      ['step-1', null, 'agent'],
      ['step-2', 'step-1', 'tool call'],
    ]);
    expect(trace.body.spans[0]).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o-mini',
      status_code: 200,
      is_success: true,
    });
    expect(trace.body.spans[0].total_tokens).toBeGreaterThan(0);
  });
});
