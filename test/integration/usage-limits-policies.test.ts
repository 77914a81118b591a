import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const POLICY_SCOPES = [
  'usage_limits_policies.create',
  'usage_limits_policies.read',
  'usage_limits_policies.list',
  'usage_limits_policies.update',
  'usage_limits_policies.delete',
];
const PATH = '/v1/policies/usage-limits';

const validUsagePolicy = (overrides: Record<string, unknown> = {}) => ({
  conditions: [{ key: 'workspace_id', value: 'default' }],
  group_by: [{ key: 'api_key' }],
  type: 'cost',
  credit_limit: 100,
  ...overrides,
});

describe('usage-limits policies: create and read', () => {
  it('creates a policy and serves it back with every field', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const body = validUsagePolicy({
      name: 'Per key budget',
      conditions: [
        { key: 'metadata.team', value: 'ml' },
        { key: 'endpoint_type', value: 'chatComplete' },
      ],
      group_by: [{ key: 'api_key' }, { key: 'metadata.user' }],
      type: 'tokens',
      credit_limit: 5000.5,
      alert_threshold: 4000,
      workspace_id: 'default',
    });
    const created = await admin.post(PATH, body);
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), object: 'usage_limits_policy' });

    const got = await admin.get(`${PATH}/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: created.body.id,
      name: 'Per key budget',
      conditions: body.conditions,
      group_by: body.group_by,
      type: 'tokens',
      credit_limit: 5000.5,
      alert_threshold: 4000,
      periodic_reset: null,
      periodic_reset_days: null,
      next_usage_reset_at: null,
      last_reset_at: null,
      status: 'active',
      workspace_id: t.server.bootstrap.workspaceId,
      organisation_id: t.server.bootstrap.organisationId,
      created_at: expect.any(String),
      last_updated_at: expect.any(String),
      object: 'usage_limits_policy',
    });
    expect(got.body.last_updated_at).toBe(got.body.created_at);
    expect(got.body).not.toHaveProperty('value_key_usage_map');
  });

  it('computes next_usage_reset_at from the schedule when it is omitted, and keeps a given one', async () => {
    const clock = createManualClock(Date.parse('2026-01-01T10:00:00.000Z')); // a Thursday
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const next = async (overrides: Record<string, unknown>) => {
      const res = await admin.post(PATH, validUsagePolicy({ workspace_id: 'default', ...overrides }));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (await admin.get(`${PATH}/${res.body.id}`)).body.next_usage_reset_at;
    };
    expect(await next({ periodic_reset: 'weekly' })).toBe('2026-01-05T00:00:00.000Z');
    expect(await next({ periodic_reset: 'monthly' })).toBe('2026-02-01T00:00:00.000Z');
    expect(await next({ periodic_reset_days: 30 })).toBe('2026-01-31T10:00:00.000Z');
    expect(await next({ periodic_reset: 'weekly', next_usage_reset_at: '2026-03-02T01:00:00+01:00' })).toBe(
      '2026-03-02T00:00:00.000Z',
    );
    expect(await next({ periodic_reset: 'monthly', periodic_reset_days: null })).toBe('2026-02-01T00:00:00.000Z');
    expect(await next({})).toBeNull();
  });

  it('accepts the workspace by id or slug and the organisation id of the caller', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { workspaceId, organisationId } = t.server.bootstrap;
    expect(
      (await admin.post(PATH, validUsagePolicy({ workspace_id: workspaceId, organisation_id: organisationId }))).status,
    ).toBe(200);
    expect((await admin.post(PATH, validUsagePolicy({ workspace_id: 'default' }))).status).toBe(200);
    const foreignOrg = await admin.post(
      PATH,
      validUsagePolicy({ workspace_id: 'default', organisation_id: '00000000-0000-4000-8000-000000000000' }),
    );
    expect(foreignOrg.status).toBe(403);
    expect(foreignOrg.body.error.param).toBe('organisation_id');
  });

  it('rejects every invalid body with 400 naming the parameter, and stores nothing', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ conditions: [] }, 'conditions'],
      [{ conditions: undefined }, 'conditions'],
      [{ group_by: [] }, 'group_by'],
      [{ group_by: undefined }, 'group_by'],
      [{ conditions: [{ key: 'model', value: 'x' }] }, 'conditions[0].key'],
      [{ conditions: [{ key: 'api_key' }] }, 'conditions[0].value'],
      [{ conditions: [{ key: 'endpoint_type', value: 'teleport' }] }, 'conditions[0].value'],
      [{ group_by: [{ key: 'endpoint_type' }] }, 'group_by[0].key'],
      [{ type: 'requests' }, 'type'],
      [{ type: undefined }, 'type'],
      [{ credit_limit: undefined }, 'credit_limit'],
      [{ credit_limit: 0 }, 'credit_limit'],
      [{ credit_limit: -5 }, 'credit_limit'],
      [{ credit_limit: '100' }, 'credit_limit'],
      [{ alert_threshold: 0 }, 'alert_threshold'],
      [{ alert_threshold: 100 }, 'alert_threshold'],
      [{ alert_threshold: 150 }, 'alert_threshold'],
      [{ periodic_reset: 'daily' }, 'periodic_reset'],
      [{ periodic_reset_days: 0 }, 'periodic_reset_days'],
      [{ periodic_reset_days: 366 }, 'periodic_reset_days'],
      [{ periodic_reset_days: 1.5 }, 'periodic_reset_days'],
      [{ periodic_reset: 'weekly', periodic_reset_days: 7 }, 'periodic_reset_days'],
      [{ next_usage_reset_at: 'next tuesday', periodic_reset: 'weekly' }, 'next_usage_reset_at'],
      [{ next_usage_reset_at: '2026-03-01T00:00:00Z' }, 'next_usage_reset_at'],
      [{ next_usage_reset_at: '2026-03-01T00:00:00Z', periodic_reset: null }, 'next_usage_reset_at'],
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ organisation_id: 'not-a-uuid' }, 'organisation_id'],
      [{ unit: 'rpm' }, 'body'],
    ];
    for (const [overrides, param] of cases) {
      const res = await admin.post(PATH, { ...validUsagePolicy({ workspace_id: 'default' }), ...overrides });
      expect(res.status, JSON.stringify(overrides)).toBe(400);
      expect(res.body.error.code, JSON.stringify(overrides)).toBe('INVALID_REQUEST');
      expect(res.body.error.param, JSON.stringify(overrides)).toBe(param);
    }
    const edges = [
      { name: 'n'.repeat(255) },
      { alert_threshold: 99.99 },
      { alert_threshold: null },
      { periodic_reset_days: 1 },
      { periodic_reset_days: 365 },
      { credit_limit: 0.01 },
    ];
    for (const overrides of edges) {
      expect(
        (await admin.post(PATH, validUsagePolicy({ workspace_id: 'default', ...overrides }))).status,
        JSON.stringify(overrides),
      ).toBe(200);
    }
    const unknownCondition = await admin.post(
      PATH,
      validUsagePolicy({ conditions: [{ key: 'workspace_id', value: 'nowhere' }] }),
    );
    expect(unknownCondition.status).toBe(404);
    expect(unknownCondition.body.error.param).toBe('conditions[0].value');
    expect((await admin.post(PATH, validUsagePolicy({ workspace_id: 'nowhere' }))).status).toBe(404);
    expect((await admin.get(PATH)).body.total).toBe(edges.length);
  });

  it('filters by status, type and workspace, and pages with page_size and current_page', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await admin.post(
        PATH,
        validUsagePolicy({
          name: `p${i}`,
          type: i < 6 ? 'cost' : 'tokens',
          workspace_id: i === 7 ? 'team-a' : 'default',
        }),
      );
      ids.push(res.body.id);
    }
    await admin.delete(`${PATH}/${ids[0]}`);

    const all = await admin.get(PATH);
    expect(all.body).toMatchObject({ object: 'list', total: 7 });
    expect(all.body.data.map((p: { name: string }) => p.name)).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
    expect(all.body.data.every((p: { object: string }) => p.object === 'usage_limits_policy')).toBe(true);
    expect((await admin.get(`${PATH}?status=archived`)).body.data.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    expect((await admin.get(`${PATH}?type=tokens`)).body.data.map((p: { name: string }) => p.name)).toEqual([
      'p6',
      'p7',
    ]);
    expect((await admin.get(`${PATH}?type=cost&status=active`)).body.total).toBe(5);
    expect((await admin.get(`${PATH}?workspace_id=team-a`)).body.data.map((p: { name: string }) => p.name)).toEqual([
      'p7',
    ]);

    const page1 = await admin.get(`${PATH}?page_size=3&current_page=1`);
    expect(page1.body.total).toBe(7);
    expect(page1.body.data.map((p: { name: string }) => p.name)).toEqual(['p4', 'p5', 'p6']);
    expect((await admin.get(`${PATH}?page_size=3&current_page=5`)).body.data).toEqual([]);
    expect((await admin.get(`${PATH}?page_size=0`)).body).toMatchObject({ total: 7, data: [] });

    for (const query of [
      'page_size=-1',
      'current_page=-1',
      'page_size=abc',
      'page_size=1.5',
      'status=deleted',
      'type=requests',
      'unit=rpm',
      'bogus=1',
    ]) {
      const res = await admin.get(`${PATH}?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
    }
    expect((await admin.get(`${PATH}?workspace_id=nowhere`)).status).toBe(404);
  });
});

describe('usage-limits policies: update, archive, isolation and audit', () => {
  it('updates fields and applies the cross-field rules to the merged policy', async () => {
    const clock = createManualClock(Date.parse('2026-01-01T10:00:00.000Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { id } = (
      await admin.post(
        PATH,
        validUsagePolicy({ workspace_id: 'default', alert_threshold: 50, periodic_reset: 'weekly' }),
      )
    ).body;
    const url = `${PATH}/${id}`;
    const read = async () => (await admin.get(url)).body;
    expect((await read()).next_usage_reset_at).toBe('2026-01-05T00:00:00.000Z');

    clock.set(Date.parse('2026-01-10T12:00:00.000Z'));
    const updated = await admin.put(url, {
      name: 'renamed',
      credit_limit: 200,
      conditions: [{ key: 'metadata.env', value: 'prod' }],
      group_by: [{ key: 'workspace_id' }],
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({});
    expect(await read()).toMatchObject({
      name: 'renamed',
      credit_limit: 200,
      alert_threshold: 50,
      type: 'cost',
      periodic_reset: 'weekly',
      next_usage_reset_at: '2026-01-05T00:00:00.000Z', // the schedule did not change: kept
      conditions: [{ key: 'metadata.env', value: 'prod' }],
      group_by: [{ key: 'workspace_id' }],
      last_updated_at: '2026-01-10T12:00:00.000Z',
    });

    // Changing the schedule recomputes the next reset unless one is given.
    expect((await admin.put(url, { periodic_reset: 'monthly' })).status).toBe(200);
    expect((await read()).next_usage_reset_at).toBe('2026-02-01T00:00:00.000Z');
    expect((await admin.put(url, { periodic_reset: null, periodic_reset_days: 10 })).status).toBe(200);
    expect(await read()).toMatchObject({
      periodic_reset: null,
      periodic_reset_days: 10,
      next_usage_reset_at: '2026-01-20T12:00:00.000Z',
    });
    expect((await admin.put(url, { next_usage_reset_at: '2026-01-15T00:00:00Z' })).status).toBe(200);
    expect((await read()).next_usage_reset_at).toBe('2026-01-15T00:00:00.000Z');
    expect(
      (
        await admin.put(url, {
          periodic_reset_days: null,
          periodic_reset: 'weekly',
          next_usage_reset_at: '2026-01-19T00:00:00Z',
        })
      ).status,
    ).toBe(200);
    expect((await read()).next_usage_reset_at).toBe('2026-01-19T00:00:00.000Z');
    // Removing the schedule makes the limit cumulative: no next reset.
    expect((await admin.put(url, { periodic_reset: null })).status).toBe(200);
    expect(await read()).toMatchObject({ periodic_reset: null, periodic_reset_days: null, next_usage_reset_at: null });
    // null clears the threshold.
    expect((await admin.put(url, { alert_threshold: null })).status).toBe(200);
    expect((await read()).alert_threshold).toBeNull();
    expect((await admin.put(url, { alert_threshold: 150 })).status).toBe(200);

    const refused: Array<[Record<string, unknown>, string]> = [
      [{}, 'body'],
      [{ credit_limit: 150 }, 'alert_threshold'], // below the stored threshold
      [{ alert_threshold: 200 }, 'alert_threshold'],
      [{ credit_limit: 0 }, 'credit_limit'],
      [{ periodic_reset_days: 400 }, 'periodic_reset_days'],
      [{ next_usage_reset_at: '2026-02-01T00:00:00Z' }, 'next_usage_reset_at'], // no schedule
      [{ conditions: [] }, 'conditions'],
      [{ group_by: [{ key: 'endpoint_type' }] }, 'group_by[0].key'],
      [{ status: 'deleted' }, 'status'],
      [{ type: 'tokens' }, 'body'],
      [{ workspace_id: 'x' }, 'body'],
      [{ reset_usage_for_value: '' }, 'reset_usage_for_value'],
    ];
    for (const [body, param] of refused) {
      const res = await admin.put(url, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.param, JSON.stringify(body)).toBe(param);
    }
    expect((await admin.put(url, { periodic_reset: 'weekly' })).status).toBe(200);
    const both = await admin.put(url, { periodic_reset_days: 7 }); // weekly is still set
    expect(both.status).toBe(400);
    expect(both.body.error.param).toBe('periodic_reset_days');
    expect(await read()).toMatchObject({
      credit_limit: 200,
      alert_threshold: 150,
      periodic_reset: 'weekly',
      periodic_reset_days: null,
    });
  });

  it('archives on delete, can be restored, and answers 404 for unknown ids', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { id } = (await admin.post(PATH, validUsagePolicy({ workspace_id: 'default' }))).body;
    expect((await admin.delete(`${PATH}/${id}`)).status).toBe(200);
    expect((await admin.get(`${PATH}/${id}`)).body.status).toBe('archived');
    expect((await admin.get(PATH)).body.total).toBe(0);
    expect((await admin.delete(`${PATH}/${id}`)).status).toBe(200);
    expect((await admin.put(`${PATH}/${id}`, { status: 'active' })).status).toBe(200);
    expect((await admin.get(PATH)).body.total).toBe(1);

    for (const unknown of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      for (const res of [
        await admin.get(`${PATH}/${unknown}`),
        await admin.put(`${PATH}/${unknown}`, { credit_limit: 1 }),
        await admin.delete(`${PATH}/${unknown}`),
        await admin.get(`${PATH}/${unknown}/entities`),
        await admin.put(`${PATH}/${unknown}/entities/x/reset`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('NOT_FOUND');
      }
    }
  });

  it('lets a workspace key see and change only its own workspace’s policies', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    await createWorkspace(admin, 'Team B', 'team-b');
    const a = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: POLICY_SCOPES })).key,
    );
    const b = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-b', scopes: POLICY_SCOPES })).key,
    );

    const ownA = await a.post(PATH, validUsagePolicy({ conditions: [{ key: 'workspace_id', value: 'team-a' }] })); // workspace implied by the key
    expect(ownA.status).toBe(200);
    expect((await a.get(`${PATH}/${ownA.body.id}`)).body.workspace_id).toBe(
      (await admin.get('/v1/workspaces/team-a')).body.id,
    );
    const intoB = await a.post(PATH, validUsagePolicy({ workspace_id: 'team-b' }));
    expect(intoB.status).toBe(403);
    expect(intoB.body.error.code).toBe('WORKSPACE_FORBIDDEN');
    const ownB = await b.post(
      PATH,
      validUsagePolicy({ workspace_id: 'team-b', conditions: [{ key: 'workspace_id', value: 'team-b' }] }),
    );
    expect(ownB.status).toBe(200);

    expect((await a.get(PATH)).body.data.map((p: { id: string }) => p.id)).toEqual([ownA.body.id]);
    expect((await a.get(`${PATH}?workspace_id=team-b`)).status).toBe(403);
    const other = `${PATH}/${ownB.body.id}`;
    for (const res of [
      await a.get(other),
      await a.get(`${other}?include_usage=true`),
      await a.put(other, { credit_limit: 1 }),
      await a.delete(other),
      await a.get(`${other}/entities`),
      await a.put(`${other}/entities/x/reset`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('WORKSPACE_FORBIDDEN');
    }
    expect((await admin.get(other)).body).toMatchObject({ credit_limit: 100, status: 'active' });
    expect((await admin.get(PATH)).body.total).toBe(2);

    // Scopes are checked per verb.
    const readOnly = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['usage_limits_policies.read'] })).key,
    );
    expect((await readOnly.get(`${PATH}/${ownA.body.id}`)).status).toBe(200);
    expect((await readOnly.get(PATH)).status).toBe(403);
    expect((await readOnly.put(`${PATH}/${ownA.body.id}`, { credit_limit: 1 })).status).toBe(403);
    expect((await readOnly.put(`${PATH}/${ownA.body.id}/entities/x/reset`)).status).toBe(403);
  });

  it('writes an audit record for every mutation, refused ones included', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const ws = await createWorkspace(admin, 'Team A', 'team-a');
    const { id } = (await admin.post(PATH, validUsagePolicy({ workspace_id: 'team-a' }))).body;
    await admin.put(`${PATH}/${id}`, { credit_limit: 7 });
    await admin.put(`${PATH}/${id}`, { credit_limit: -1 });
    await admin.put(`${PATH}/${id}/entities/${encodeURIComponent('k|1')}/reset`);
    await admin.delete(`${PATH}/${id}`);
    await admin.get(PATH);
    await admin.get(`${PATH}/${id}/entities`);

    const records = [...(await admin.get('/v1/audit-logs?resource_type=usage_limits_policy')).body.data].reverse();
    expect(records.map((r: any) => [r.action, r.method, r.response_status_code])).toEqual([
      ['create', 'POST', 200],
      ['update', 'PUT', 200],
      ['update', 'PUT', 400],
      ['reset_usage', 'PUT', 200],
      ['delete', 'DELETE', 200],
    ]);
    expect(
      records.filter((r: any) => r.response_status_code === 200).map((r: any) => [r.resource_id, r.workspace_id]),
    ).toEqual(Array(4).fill([id, ws.id]));
    expect(records[1]).toMatchObject({ uri: `${PATH}/${id}`, request_body: { credit_limit: 7 } });
  });
});
