import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey, validPolicy } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const POLICY_SCOPES = [
  'rate_limits_policies.create',
  'rate_limits_policies.read',
  'rate_limits_policies.list',
  'rate_limits_policies.update',
  'rate_limits_policies.delete',
];

describe('rate-limits policies: create and read', () => {
  it('creates a policy and serves it back exactly as the spec shapes it', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const body = validPolicy({
      name: 'Per key',
      conditions: [
        { key: 'metadata.team', value: 'ml' },
        { key: 'endpoint_type', value: 'chatComplete' },
      ],
      group_by: [{ key: 'api_key' }, { key: 'metadata.user' }],
      unit: 'rpw',
      workspace_id: 'default',
    });
    const created = await admin.post('/v1/policies/rate-limits', body);
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['id', 'object']);
    expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/);

    const got = await admin.get(`/v1/policies/rate-limits/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: created.body.id,
      name: 'Per key',
      conditions: body.conditions,
      group_by: body.group_by,
      type: 'requests',
      unit: 'rpw',
      value: 100,
      status: 'active',
      workspace_id: t.server.bootstrap.workspaceId,
      organisation_id: t.server.bootstrap.organisationId,
    });
    expect(Date.parse(got.body.created_at)).not.toBeNaN();
    expect(got.body.last_updated_at).toBe(got.body.created_at);
  });

  it('accepts the workspace by id or slug and the organisation id of the caller', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { workspaceId, organisationId } = t.server.bootstrap;
    expect(
      (
        await admin.post(
          '/v1/policies/rate-limits',
          validPolicy({ workspace_id: workspaceId, organisation_id: organisationId }),
        )
      ).status,
    ).toBe(200);
    expect((await admin.post('/v1/policies/rate-limits', validPolicy({ workspace_id: 'default' }))).status).toBe(200);
    const foreignOrg = await admin.post(
      '/v1/policies/rate-limits',
      validPolicy({ workspace_id: 'default', organisation_id: '00000000-0000-4000-8000-000000000000' }),
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
      [{ conditions: [{ key: 'metadata.', value: 'x' }] }, 'conditions[0].key'],
      [{ group_by: [{ key: 'endpoint_type' }] }, 'group_by[0].key'],
      [{ group_by: [{}] }, 'group_by[0].key'],
      [{ type: 'bytes' }, 'type'],
      [{ type: undefined }, 'type'],
      [{ unit: 'rps' }, 'unit'],
      [{ unit: undefined }, 'unit'],
      [{ value: '10' }, 'value'],
      [{ value: -1 }, 'value'],
      [{ value: undefined }, 'value'],
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ name: 42 }, 'name'],
      [{ organisation_id: 'not-a-uuid' }, 'organisation_id'],
      [{ colour: 'blue' }, 'body'],
    ];
    for (const [overrides, param] of cases) {
      const res = await admin.post('/v1/policies/rate-limits', {
        ...validPolicy({ workspace_id: 'default' }),
        ...overrides,
      });
      expect(res.status, JSON.stringify(overrides)).toBe(400);
      expect(res.body.error.code, JSON.stringify(overrides)).toBe('INVALID_REQUEST');
      expect(res.body.error.param, JSON.stringify(overrides)).toBe(param);
    }
    expect(
      (
        await admin.post('/v1/policies/rate-limits', {
          ...validPolicy({ workspace_id: 'default' }),
          name: 'n'.repeat(255),
        })
      ).status,
    ).toBe(200);
    const unknownCondition = await admin.post(
      '/v1/policies/rate-limits',
      validPolicy({ conditions: [{ key: 'workspace_id', value: 'nowhere' }] }),
    );
    expect(unknownCondition.status).toBe(404);
    expect(unknownCondition.body.error.param).toBe('conditions[0].value');
    const unknownWorkspace = await admin.post('/v1/policies/rate-limits', validPolicy({ workspace_id: 'nowhere' }));
    expect(unknownWorkspace.status).toBe(404);
    expect((await admin.get('/v1/policies/rate-limits')).body.total).toBe(1);
  });

  it('filters by status, type, unit and workspace, and pages with page_size and current_page', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    const units = ['rpm', 'rph', 'rpd', 'rpw'];
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await admin.post(
        '/v1/policies/rate-limits',
        validPolicy({
          name: `p${i}`,
          unit: units[i % 4],
          type: i < 6 ? 'requests' : 'tokens',
          workspace_id: i === 7 ? 'team-a' : 'default',
        }),
      );
      ids.push(res.body.id);
    }
    await admin.delete(`/v1/policies/rate-limits/${ids[0]}`);

    const all = await admin.get('/v1/policies/rate-limits');
    expect(all.body).toMatchObject({ object: 'list', total: 7 });
    expect(all.body.data.map((p: { name: string }) => p.name)).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
    expect(
      (await admin.get('/v1/policies/rate-limits?status=archived')).body.data.map((p: { id: string }) => p.id),
    ).toEqual([ids[0]]);
    expect((await admin.get('/v1/policies/rate-limits?type=tokens')).body.total).toBe(2);
    expect(
      (await admin.get('/v1/policies/rate-limits?unit=rpw')).body.data.map((p: { name: string }) => p.name),
    ).toEqual(['p3', 'p7']);
    expect(
      (await admin.get('/v1/policies/rate-limits?workspace_id=team-a')).body.data.map((p: { name: string }) => p.name),
    ).toEqual(['p7']);

    const page1 = await admin.get('/v1/policies/rate-limits?page_size=3&current_page=1');
    expect(page1.body.total).toBe(7);
    expect(page1.body.data.map((p: { name: string }) => p.name)).toEqual(['p4', 'p5', 'p6']);
    expect((await admin.get('/v1/policies/rate-limits?page_size=3&current_page=5')).body.data).toEqual([]);
    expect((await admin.get('/v1/policies/rate-limits?page_size=0')).body).toMatchObject({ total: 7, data: [] });

    for (const query of [
      'page_size=-1',
      'current_page=-1',
      'page_size=abc',
      'page_size=1.5',
      'status=deleted',
      'unit=rps',
      'type=x',
      'bogus=1',
    ]) {
      const res = await admin.get(`/v1/policies/rate-limits?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
    }
  });
});

describe('rate-limits policies: update, archive and isolation', () => {
  it('updates fields, archives on delete, and answers 404 for unknown ids', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { id } = (await admin.post('/v1/policies/rate-limits', validPolicy({ workspace_id: 'default' }))).body;
    const updated = await admin.put(`/v1/policies/rate-limits/${id}`, { name: 'renamed', unit: 'rph', value: 5 });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({});
    expect((await admin.get(`/v1/policies/rate-limits/${id}`)).body).toMatchObject({
      name: 'renamed',
      unit: 'rph',
      value: 5,
      type: 'requests',
    });

    expect((await admin.put(`/v1/policies/rate-limits/${id}`, {})).status).toBe(400);
    expect((await admin.put(`/v1/policies/rate-limits/${id}`, { value: 'many' })).body.error.param).toBe('value');
    expect((await admin.put(`/v1/policies/rate-limits/${id}`, { workspace_id: 'x' })).status).toBe(400);

    expect((await admin.delete(`/v1/policies/rate-limits/${id}`)).status).toBe(200);
    expect((await admin.get(`/v1/policies/rate-limits/${id}`)).body.status).toBe('archived');
    expect((await admin.delete(`/v1/policies/rate-limits/${id}`)).status).toBe(200);
    expect((await admin.put(`/v1/policies/rate-limits/${id}`, { status: 'active' })).status).toBe(200);
    expect((await admin.get('/v1/policies/rate-limits')).body.total).toBe(1);

    for (const unknown of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      expect((await admin.get(`/v1/policies/rate-limits/${unknown}`)).status).toBe(404);
      expect((await admin.put(`/v1/policies/rate-limits/${unknown}`, { value: 1 })).status).toBe(404);
      const del = await admin.delete(`/v1/policies/rate-limits/${unknown}`);
      expect(del.status).toBe(404);
      expect(del.body.error.code).toBe('NOT_FOUND');
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

    const ownA = await a.post(
      '/v1/policies/rate-limits',
      validPolicy({ conditions: [{ key: 'workspace_id', value: 'team-a' }] }),
    ); // workspace implied by the key
    expect(ownA.status).toBe(200);
    expect((await a.get(`/v1/policies/rate-limits/${ownA.body.id}`)).body.workspace_id).toBe(
      (await admin.get('/v1/workspaces/team-a')).body.id,
    );
    const intoB = await a.post('/v1/policies/rate-limits', validPolicy({ workspace_id: 'team-b' }));
    expect(intoB.status).toBe(403);
    expect(intoB.body.error.code).toBe('WORKSPACE_FORBIDDEN');
    const ownB = await b.post(
      '/v1/policies/rate-limits',
      validPolicy({ workspace_id: 'team-b', conditions: [{ key: 'workspace_id', value: 'team-b' }] }),
    );

    expect((await a.get('/v1/policies/rate-limits')).body.data.map((p: { id: string }) => p.id)).toEqual([
      ownA.body.id,
    ]);
    expect((await a.get('/v1/policies/rate-limits?workspace_id=team-b')).status).toBe(403);
    expect((await a.get(`/v1/policies/rate-limits/${ownB.body.id}`)).status).toBe(403);
    expect((await a.put(`/v1/policies/rate-limits/${ownB.body.id}`, { value: 1 })).status).toBe(403);
    expect((await a.delete(`/v1/policies/rate-limits/${ownB.body.id}`)).status).toBe(403);
    expect((await admin.get(`/v1/policies/rate-limits/${ownB.body.id}`)).body).toMatchObject({
      value: 100,
      status: 'active',
    });
    expect((await admin.get('/v1/policies/rate-limits')).body.total).toBe(2);
  });
});
