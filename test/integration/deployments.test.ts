import { describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../src/auth/scopes.js';
import { newId } from '../../src/lib/ids.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';
import { expectRefused } from '../helpers/tenant-pair.js';

const routing = { provider: 'openai', override_params: { model: 'gpt-4o-mini' } };

async function setUp() {
  const t = await startTestServer();
  const admin = apiClient(t.baseUrl, t.adminKey);
  const a = await createWorkspace(admin, 'Team A', 'team-a');
  const b = await createWorkspace(admin, 'Team B', 'team-b');
  const config = (await admin.post('/v1/configs', { name: 'EU routing', slug: 'eu-routing', config: routing })).body;
  return { t, admin, a, b, config };
}

describe('deployments: create, read, list, update, delete', () => {
  it('creates a deployment with its config, limits and workspaces, and shows it as stored', async () => {
    const { t, admin, a, b, config } = await setUp();
    const created = await admin.post('/v1/deployments', {
      name: 'EU production',
      slug: 'eu-prod',
      type: 'production',
      description: 'Frankfurt',
      config_id: 'eu-routing',
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 600 }],
      usage_limits: { credit_limit: 50, periodic_reset: 'monthly' },
      allowed_workspaces: ['team-a', b.id, 'team-a'],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['id', 'object', 'slug']);
    expect(created.body).toMatchObject({ slug: 'eu-prod', object: 'deployment' });

    const got = await admin.get('/v1/deployments/eu-prod');
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: created.body.id,
      slug: 'eu-prod',
      name: 'EU production',
      description: 'Frankfurt',
      type: 'production',
      status: 'active',
      organisation_id: t.server.bootstrap.organisationId,
      config_id: config.id,
      config_slug: 'eu-routing',
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 600 }],
      allowed_workspaces: [
        { id: a.id, slug: 'team-a' },
        { id: b.id, slug: 'team-b' },
      ],
      instances: [],
      minimum_gateway_version: '0.1.0',
      object: 'deployment',
    });
    // A monthly budget gets its first reset date, and shows what it has used.
    expect(got.body.usage_limits).toMatchObject({ credit_limit: 50, periodic_reset: 'monthly', current_usage: 0 });
    expect(got.body.usage_limits.next_usage_reset_at).toMatch(/^\d{4}-\d{2}-01T00:00:00/);
    // By id too.
    expect((await admin.get(`/v1/deployments/${created.body.id}`)).body.slug).toBe('eu-prod');
  });

  it('lists deployments, filtered by type, in pages', async () => {
    const { admin } = await setUp();
    for (const [slug, type] of [
      ['prod-eu', 'production'],
      ['staging', 'non-production'],
      ['prod-us', 'production'],
      ['dev', 'non-production'],
    ] as const)
      expect((await admin.post('/v1/deployments', { name: slug, slug, type })).status).toBe(200);

    const all = await admin.get('/v1/deployments');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ object: 'list', total: 4 });
    expect(all.body.data.map((d: any) => d.slug)).toEqual(['prod-eu', 'staging', 'prod-us', 'dev']);
    expect(all.body.data[0]).not.toHaveProperty('instances');

    const production = await admin.get('/v1/deployments?type=production');
    expect(production.body.total).toBe(2);
    expect(production.body.data.map((d: any) => d.slug)).toEqual(['prod-eu', 'prod-us']);
    const nonProduction = await admin.get('/v1/deployments?type=non-production&page_size=1&current_page=1');
    expect(nonProduction.body.total).toBe(2);
    expect(nonProduction.body.data.map((d: any) => d.slug)).toEqual(['dev']);

    expectRefused(await admin.get('/v1/deployments?type=staging'), 400, 'INVALID_REQUEST', 'type');
  });

  it('updates what may change, and keeps the slug instances join by', async () => {
    const { admin } = await setUp();
    await admin.post('/v1/deployments', {
      name: 'Edge',
      slug: 'edge',
      type: 'non-production',
      config_id: 'eu-routing',
      allowed_workspaces: ['team-a'],
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 10 }],
    });
    const updated = await admin.put('/v1/deployments/edge', {
      name: 'Edge (promoted)',
      type: 'production',
      config_id: null,
      allowed_workspaces: null,
      rate_limits: [{ type: 'tokens', unit: 'rph', value: 100000 }],
      usage_limits: { credit_limit: 5, type: 'tokens' },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toEqual({});
    const got = (await admin.get('/v1/deployments/edge')).body;
    expect(got).toMatchObject({
      name: 'Edge (promoted)',
      type: 'production',
      config_id: null,
      config_slug: null,
      allowed_workspaces: null,
      rate_limits: [{ type: 'tokens', unit: 'rph', value: 100000 }],
    });
    expect(got.usage_limits).toMatchObject({ credit_limit: 5, type: 'tokens', current_usage: 0 });

    expectRefused(await admin.put('/v1/deployments/edge', { slug: 'other' }), 400, 'INVALID_REQUEST');
    expectRefused(await admin.put('/v1/deployments/edge', {}), 400, 'INVALID_REQUEST');
    // Limits removed with null.
    await admin.put('/v1/deployments/edge', { rate_limits: null, usage_limits: null });
    expect((await admin.get('/v1/deployments/edge')).body).toMatchObject({ rate_limits: null, usage_limits: null });
  });

  it('deletes by archiving: the slug is free again and the old deployment stays readable', async () => {
    const { admin } = await setUp();
    const first = (await admin.post('/v1/deployments', { name: 'Old', slug: 'blue', type: 'production' })).body;
    expect((await admin.delete('/v1/deployments/blue')).status).toBe(200);
    expect((await admin.get(`/v1/deployments/${first.id}`)).body.status).toBe('archived');
    expect((await admin.get('/v1/deployments')).body.total).toBe(0);
    expect((await admin.get('/v1/deployments?status=archived')).body.data.map((d: any) => d.id)).toEqual([first.id]);
    expectRefused(
      await admin.put(`/v1/deployments/${first.id}`, { name: 'x' }),
      400,
      'INVALID_REQUEST',
      'deploymentId',
    );

    const second = await admin.post('/v1/deployments', { name: 'New', slug: 'blue', type: 'production' });
    expect(second.status).toBe(200);
    // The slug names the active one first.
    expect((await admin.get('/v1/deployments/blue')).body.id).toBe(second.body.id);
    // Deleting twice is fine.
    expect((await admin.delete(`/v1/deployments/${first.id}`)).status).toBe(200);
  });
});

describe('deployments: validation', () => {
  it('refuses bad bodies with the parameter named, and unknown references with 404', async () => {
    const { admin } = await setUp();
    const base = { name: 'X', slug: 'x', type: 'production' };
    const cases: Array<[Record<string, unknown>, number, string, string | null]> = [
      [{ ...base, type: 'staging' }, 400, 'INVALID_REQUEST', 'type'],
      [{ name: 'X' }, 400, 'INVALID_REQUEST', 'type'],
      [{ ...base, slug: 'Upper Case' }, 400, 'INVALID_REQUEST', 'slug'],
      [{ ...base, slug: '00000000-0000-4000-8000-000000000000' }, 400, 'INVALID_REQUEST', 'slug'],
      [{ ...base, region: 'eu' }, 400, 'INVALID_REQUEST', null],
      [
        { ...base, rate_limits: [{ type: 'requests', unit: 'rpy', value: 1 }] },
        400,
        'INVALID_REQUEST',
        'rate_limits[0].unit',
      ],
      [
        { ...base, usage_limits: { credit_limit: 10, periodic_reset: 'weekly', periodic_reset_days: 3 } },
        400,
        'INVALID_REQUEST',
        'usage_limits.periodic_reset_days',
      ],
      [{ ...base, allowed_workspaces: [] }, 400, 'INVALID_REQUEST', 'allowed_workspaces'],
      [{ ...base, config_id: 'no-such-config' }, 404, 'NOT_FOUND', 'config_id'],
      [{ ...base, allowed_workspaces: ['team-a', 'no-such-team'] }, 404, 'NOT_FOUND', 'allowed_workspaces[1]'],
    ];
    for (const [body, status, code, param] of cases) {
      const res = await admin.post('/v1/deployments', body);
      expect(res.status, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`).toBe(status);
      expect(res.body.error.code).toBe(code);
      if (param !== null) expect(res.body.error.param).toBe(param);
    }
    expect((await admin.get('/v1/deployments')).body.total).toBe(0);

    expect((await admin.post('/v1/deployments', base)).status).toBe(200);
    expectRefused(await admin.post('/v1/deployments', base), 409, 'CONFLICT', 'slug');
    // An archived config cannot become a deployment's config.
    await admin.delete('/v1/configs/eu-routing');
    expectRefused(await admin.put('/v1/deployments/x', { config_id: 'eu-routing' }), 404, 'NOT_FOUND', 'config_id');

    for (const unknown of ['00000000-0000-4000-8000-000000000000', 'no-such-deployment']) {
      expectRefused(await admin.get(`/v1/deployments/${unknown}`), 404, 'NOT_FOUND');
      expectRefused(await admin.put(`/v1/deployments/${unknown}`, { name: 'y' }), 404, 'NOT_FOUND');
      expectRefused(await admin.delete(`/v1/deployments/${unknown}`), 404, 'NOT_FOUND');
    }
  });

  it("answers 404 for another organisation's deployment", async () => {
    const { t, admin } = await setUp();
    const foreign = newId();
    const stamp = new Date().toISOString();
    await t.server.db
      .insertInto('deployments')
      .values({
        id: foreign,
        organisation_id: newId(),
        slug: 'theirs',
        name: 'Theirs',
        description: null,
        type: 'production',
        status: 'active',
        config_id: null,
        rate_limits: null,
        usage_limits: null,
        allowed_workspaces: null,
        created_at: stamp,
        last_updated_at: stamp,
      })
      .execute();
    expectRefused(await admin.get(`/v1/deployments/${foreign}`), 404, 'NOT_FOUND');
    expectRefused(await admin.get('/v1/deployments/theirs'), 404, 'NOT_FOUND');
    expectRefused(await admin.put(`/v1/deployments/${foreign}`, { name: 'mine' }), 404, 'NOT_FOUND');
    expectRefused(await admin.delete(`/v1/deployments/${foreign}`), 404, 'NOT_FOUND');
    expect((await admin.get('/v1/deployments')).body.total).toBe(0);
    // Its slug is its own: this organisation may use the same one.
    expect((await admin.post('/v1/deployments', { name: 'Ours', slug: 'theirs', type: 'production' })).status).toBe(
      200,
    );
  });
});

describe('deployments: who may, and the audit trail', () => {
  it('is for admin keys of organisation owners and admins holding the deployments scopes', async () => {
    const { t, admin } = await setUp();
    await admin.post('/v1/deployments', { name: 'P', slug: 'p', type: 'production' });
    const workspaceKey = (
      await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['completions.write', 'workspaces.read'] })
    ).key;
    expectRefused(await apiClient(t.baseUrl, workspaceKey).get('/v1/deployments'), 403, 'KEY_TYPE_NOT_ALLOWED');

    const readOnly = await admin.post('/v1/api-keys/organisation/service', {
      name: 'reader',
      scopes: ['deployments.list', 'deployments.read'],
    });
    const reader = apiClient(t.baseUrl, readOnly.body.key);
    expect((await reader.get('/v1/deployments')).body.total).toBe(1);
    expect((await reader.get('/v1/deployments/p')).status).toBe(200);
    expectRefused(await reader.post('/v1/deployments', { name: 'Q', type: 'production' }), 403, 'MISSING_SCOPE');
    expectRefused(await reader.put('/v1/deployments/p', { name: 'Q' }), 403, 'MISSING_SCOPE');
    expectRefused(await reader.delete('/v1/deployments/p'), 403, 'MISSING_SCOPE');

    const scopes = (await admin.get('/v1/api-keys/scopes')).body;
    const names = JSON.stringify(scopes);
    for (const verb of ['create', 'read', 'list', 'update', 'delete']) {
      expect(names).toContain(`deployments.${verb}`);
      expect(ALL_SCOPES).toContain(`deployments.${verb}`);
    }
  });

  it('audits every change, refused ones included', async () => {
    const { admin } = await setUp();
    const { id } = (await admin.post('/v1/deployments', { name: 'A', slug: 'audited', type: 'production' })).body;
    await admin.put('/v1/deployments/audited', { type: 'non-production' });
    await admin.post('/v1/deployments', { name: 'A', slug: 'audited', type: 'production' });
    await admin.delete('/v1/deployments/audited');
    await admin.get('/v1/deployments/audited');
    const records = (await admin.get('/v1/audit-logs?resource_type=deployment')).body.data.reverse();
    expect(records.map((r: any) => [r.action, r.method, r.response_status_code])).toEqual([
      ['create', 'POST', 200],
      ['update', 'PUT', 200],
      ['create', 'POST', 409],
      ['delete', 'DELETE', 200],
    ]);
    expect(records.filter((r: any) => r.response_status_code === 200).map((r: any) => r.resource_id)).toEqual([
      id,
      id,
      id,
    ]);
  });
});
