import { describe, expect, it } from 'vitest';
import { feedbackForTraces } from '../../src/admin/observability/index.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';

describe('feedback', () => {
  it('takes feedback on a trace from a workspace key, updates it, and shows it on the trace', async () => {
    const gw = await startGateway();
    const key = await createWorkspaceKey(gw.admin, {
      workspace_id: 'default',
      scopes: ['completions.write', 'feedback.create', 'feedback.update', 'logs.view'],
    });
    const client = apiClient(gw.baseUrl, key.key);
    const chat = await client.post(
      '/v1/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { ...gw.viaMock, 'x-service-trace-id': 'chat-42' },
    );
    expect(chat.status).toBe(200);

    const created = await client.post('/v1/feedback', { trace_id: 'chat-42', value: 8, metadata: { reviewer: 'qa' } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      status: 'success',
      message: 'feedback created',
      feedback_ids: [expect.any(String)],
    });
    const id = created.body.feedback_ids[0];
    const second = await client.post('/v1/feedback', { trace_id: 'chat-42', value: -4, weight: 0.5 });
    expect(second.status).toBe(200);

    const trace = await client.get('/v1/traces/chat-42');
    expect(trace.status).toBe(200);
    expect(trace.body.feedback).toMatchObject([
      { id, trace_id: 'chat-42', value: 8, weight: 1, metadata: { reviewer: 'qa' }, object: 'feedback' },
      { value: -4, weight: 0.5, metadata: null },
    ]);
    expect(trace.body.weighted_feedback).toBeCloseTo((8 - 2) / 1.5);

    const updated = await client.put(`/v1/feedback/${id}`, { value: 10 });
    expect(updated.body).toEqual({ status: 'success', message: 'feedback updated', feedback_ids: [id] });
    const after = await client.get('/v1/traces/chat-42');
    expect(after.body.feedback[0]).toMatchObject({ value: 10, weight: 1, metadata: { reviewer: 'qa' } });
    expect(after.body.feedback[0].last_updated_at >= after.body.feedback[0].created_at).toBe(true);

    // What the logs routes call to show feedback on log records.
    const org = await gw.server.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    const byTrace = await feedbackForTraces(gw.server.db, org.id, ['chat-42', 'unknown']);
    expect(byTrace.get('chat-42')?.map((f) => f.value)).toEqual([10, -4]);
    expect(byTrace.has('unknown')).toBe(false);

    const audit = await gw.admin.get('/v1/audit-logs?resource_type=feedback');
    expect(audit.status).toBe(200);
    const records = audit.body.records ?? audit.body.data;
    expect(records.map((r: { action: string }) => r.action).sort()).toEqual(['create', 'create', 'update']);
  });

  it('refuses admin keys (workspace keys only), keys without the scope, and out-of-range values', async () => {
    const gw = await startGateway();
    const admin = await gw.admin.post('/v1/feedback', { trace_id: 't', value: 1 });
    expect(admin.status).toBe(403);
    expect(admin.body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');
    expect(
      (await gw.admin.put('/v1/feedback/00000000-0000-4000-8000-000000000000', { value: 1 })).body.error.code,
    ).toBe('KEY_TYPE_NOT_ALLOWED');

    const readOnly = apiClient(
      gw.baseUrl,
      (await createWorkspaceKey(gw.admin, { workspace_id: 'default', scopes: ['feedback.create'] })).key,
    );
    expect(
      (await readOnly.put('/v1/feedback/00000000-0000-4000-8000-000000000000', { value: 1 })).body.error.code,
    ).toBe('MISSING_SCOPE');
    const noScope = apiClient(
      gw.baseUrl,
      (await createWorkspaceKey(gw.admin, { workspace_id: 'default', scopes: ['logs.view'] })).key,
    );
    expect((await noScope.post('/v1/feedback', { trace_id: 't', value: 1 })).body.error.code).toBe('MISSING_SCOPE');

    const client = apiClient(
      gw.baseUrl,
      (await createWorkspaceKey(gw.admin, { workspace_id: 'default', scopes: ['feedback.create', 'feedback.update'] }))
        .key,
    );
    for (const [body, param] of [
      [{ value: 1 }, 'trace_id'],
      [{ trace_id: 't' }, 'value'],
      [{ trace_id: 't', value: 11 }, 'value'],
      [{ trace_id: 't', value: -11 }, 'value'],
      [{ trace_id: 't', value: 1.5 }, 'value'],
      [{ trace_id: 't', value: 1, weight: 1.01 }, 'weight'],
      [{ trace_id: 't', value: 1, weight: -0.1 }, 'weight'],
      [{ trace_id: 't', value: 1, metadata: [1] }, 'metadata'],
      [{ trace_id: 'a b', value: 1 }, 'trace_id'],
    ] as const) {
      const res = await client.post('/v1/feedback', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      expect(res.body.error.param ?? '', JSON.stringify(body)).toContain(param);
    }
    expect((await client.put('/v1/feedback/not-a-uuid', { value: 1 })).status).toBe(404);
    expect((await client.put('/v1/feedback/00000000-0000-4000-8000-000000000000', { value: 1 })).status).toBe(404);
  });

  it('keeps feedback in the workspace that gave it: another workspace can neither change nor see it', async () => {
    const gw = await startGateway();
    await createWorkspace(gw.admin, 'Team', 'team');
    const scopes = ['feedback.create', 'feedback.update', 'logs.view', 'completions.write'];
    const mine = apiClient(gw.baseUrl, (await createWorkspaceKey(gw.admin, { workspace_id: 'default', scopes })).key);
    const teamKey = (await createWorkspaceKey(gw.admin, { workspace_id: 'team', scopes })).key;
    const theirs = apiClient(gw.baseUrl, teamKey);
    await theirs.post(
      '/v1/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { ...gw.viaMock, 'x-service-trace-id': 'shared-trace' },
    );

    const created = await mine.post('/v1/feedback', { trace_id: 'shared-trace', value: -10 });
    expect(created.status).toBe(200);
    expect((await theirs.put(`/v1/feedback/${created.body.feedback_ids[0]}`, { value: 10 })).status).toBe(404);
    const trace = await theirs.get('/v1/traces/shared-trace');
    expect(trace.status).toBe(200);
    expect(trace.body.feedback).toEqual([]);
  });
});
