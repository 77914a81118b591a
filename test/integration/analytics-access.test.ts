import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';

const SCOPES = ['completions.write', 'analytics.view', 'logs.list'];

describe('analytics of gateway traffic, and who sees what', () => {
  it('counts real traffic, and follows workspace keys, data visibility and the analytics settings', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T09:00:00Z'));
    const g = await startGateway({ clock });
    const orgId = g.server.bootstrap.organisationId;
    const a = await createWorkspace(g.admin, 'Team A', 'team-a');
    const other = await createWorkspace(g.admin, 'Other', 'other');
    const member = await addUser(g.server.db, orgId, 'member', [{ workspaceId: a.id, role: 'member' }]);
    const manager = await addUser(g.server.db, orgId, 'member', [{ workspaceId: a.id, role: 'manager' }]);
    const memberKey = await createWorkspaceKey(g.admin, { workspace_id: a.id, user_id: member, scopes: SCOPES });
    const managerKey = await createWorkspaceKey(g.admin, { workspace_id: a.id, user_id: manager, scopes: SCOPES });
    const asMember = apiClient(g.baseUrl, memberKey.key);
    const asManager = apiClient(g.baseUrl, managerKey.key);
    const chat = (key: string, model: string, metadata?: Record<string, string>) =>
      g
        .openai({
          ...g.viaMock,
          'x-service-api-key': key,
          ...(metadata ? { 'x-service-metadata': JSON.stringify(metadata) } : {}),
        })
        .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });

    // The member: two gpt-4o requests tagged env=prod. The manager: one gpt-4o-mini, one that the provider fails.
    await chat(memberKey.key, 'gpt-4o', { env: 'prod' });
    await chat(memberKey.key, 'gpt-4o', { env: 'prod' });
    await chat(managerKey.key, 'gpt-4o-mini', { env: 'dev' });
    g.mock.behave({ kind: 'error', status: 500 }, { times: 1 });
    await expect(chat(managerKey.key, 'gpt-4o-mini')).rejects.toThrow();
    const logs = await g.logs(4);
    const tokensOf = (model: string) =>
      logs
        .filter((l: any) => l.model === model && l.status_code === 200)
        .reduce((sum: number, l: any) => sum + l.total_tokens, 0);

    const groups = async (client = g.admin, path = '/v1/analytics/groups/model', query = `workspace_id=${a.id}`) => {
      const res = await client.get(`${path}?${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((row: any) => [row[path.split('/').at(-1)!], row.requests]);
    };
    expect(await groups()).toEqual([
      ['gpt-4o', 2],
      ['gpt-4o-mini', 2],
    ]);
    expect(await groups(g.admin, '/v1/analytics/groups/status_code')).toEqual([
      [200, 3],
      [500, 1],
    ]);
    expect(await groups(g.admin, '/v1/analytics/groups/ai_service')).toEqual([['openai', 4]]);
    expect(await groups(g.admin, '/v1/analytics/groups/provider')).toEqual([['custom_host', 4]]);
    expect(await groups(g.admin, '/v1/analytics/groups/api_key')).toEqual(
      [
        [managerKey.id, 2],
        [memberKey.id, 2],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    expect(await groups(g.admin, '/v1/analytics/groups/workspace', '')).toEqual([[a.id, 4]]);
    const columns = await g.admin.get(
      `/v1/analytics/groups/model?columns=total_tokens,error_count,success_rate&metadata=${encodeURIComponent('{"env":"prod"}')}`,
    );
    expect(columns.body.data).toEqual([
      {
        model: 'gpt-4o',
        requests: 2,
        total_tokens: tokensOf('gpt-4o'),
        error_count: 0,
        success_rate: 1,
        object: 'analytics-group',
      },
    ]);
    expect((await g.admin.get('/v1/analytics/summary?model=gpt-4o-mini')).body.summary).toMatchObject({
      requests: 2,
      errors: 1,
      success_rate: 0.5,
      total_tokens: tokensOf('gpt-4o-mini'),
    });

    // A workspace key sees its own workspace, and is refused another.
    expect(await groups(asMember, '/v1/analytics/groups/workspace', '')).toEqual([[a.id, 4]]);
    const foreign = await asMember.get(`/v1/analytics/summary?workspace_id=${other.id}`);
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('WORKSPACE_FORBIDDEN');

    // Data visibility off for members: the member sees only its own key's requests, everywhere.
    expect(
      (
        await g.admin.put(`/v1/workspaces/${a.id}/settings/security`, {
          data_visibility: { membersViewAllData: false },
        })
      ).status,
    ).toBe(200);
    expect(await groups(asMember, '/v1/analytics/groups/model', '')).toEqual([['gpt-4o', 2]]);
    expect(await groups(asMember, '/v1/logs/groups/api_key', '')).toEqual([[memberKey.id, 2]]);
    expect((await asMember.get('/v1/analytics/graphs/requests')).body.summary.total).toBe(2);
    expect(await groups(asManager, '/v1/analytics/groups/model', '')).toEqual([
      ['gpt-4o', 2],
      ['gpt-4o-mini', 2],
    ]);

    // Analytics off for members: 403 on analytics, while grouped logs still answer (own data only).
    expect(
      (await g.admin.put(`/v1/workspaces/${a.id}/settings/security`, { analytics: { membersViewAnalytics: false } }))
        .status,
    ).toBe(200);
    for (const path of ['/v1/analytics/summary', '/v1/analytics/groups/model', '/v1/analytics/graphs/latency']) {
      const refused = await asMember.get(path);
      expect(refused.status, path).toBe(403);
      expect(refused.body.error.code).toBe('ROLE_NOT_ALLOWED');
      expect(refused.body.error.message).toContain('membersViewAnalytics');
    }
    expect(await groups(asMember, '/v1/logs/groups/model', '')).toEqual([['gpt-4o', 2]]);
    expect((await asManager.get('/v1/analytics/summary')).body.summary.requests).toBe(4);
    // Owners and admins are never limited by these settings.
    expect((await g.admin.get('/v1/analytics/summary')).body.summary.requests).toBe(4);

    // Scopes: analytics.view for analytics, logs.list for grouped logs.
    const logsOnly = await createWorkspaceKey(g.admin, { workspace_id: a.id, scopes: ['logs.list'] });
    expect((await apiClient(g.baseUrl, logsOnly.key).get('/v1/analytics/summary')).body.error.code).toBe(
      'MISSING_SCOPE',
    );
    expect((await apiClient(g.baseUrl, logsOnly.key).get('/v1/logs/groups/model')).status).toBe(200);
  });
});
