import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { expectRefused, startTenantPair } from '../helpers/tenant-pair.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const DRY = { 'x-service-dry-run': 'true' };

/** Everything a dry run could leave behind: rows of the resources and audit records. */
async function footprint(admin: ApiClient) {
  const [workspaces, integrations, providers, keys, audit] = await Promise.all([
    admin.get('/v1/workspaces?status=active,archived'),
    admin.get('/v1/integrations'),
    admin.get('/v1/providers'),
    admin.get('/v1/api-keys'),
    admin.get('/v1/audit-logs'),
  ]);
  return {
    workspaces: workspaces.body.total,
    integrations: integrations.body.total,
    providers: providers.body.total,
    keys: keys.body.total,
    audit: audit.body.total,
  };
}

describe('dry runs of admin mutations (x-service-dry-run: true)', () => {
  it('answers what the real request would, and leaves nothing behind, audit records included', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    const before = await footprint(admin);

    const ok = await admin.post('/v1/workspaces', { name: 'Team B', slug: 'team-b' }, DRY);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-service-dry-run')).toBe('true');
    expect(ok.body.slug).toBe('team-b');

    // A duplicate slug: the dry run is refused as the real request is.
    const duplicate = await admin.post('/v1/workspaces', { name: 'Again', slug: 'team-a' }, DRY);
    const real = await admin.post('/v1/workspaces', { name: 'Again', slug: 'team-a' });
    expect(duplicate.status).toBe(real.status);
    expect(duplicate.status).toBeGreaterThanOrEqual(400);
    expect(duplicate.body.error.code).toBe(real.body.error.code);

    const invalid = await admin.post('/v1/workspaces', { name: '' }, DRY);
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.param).toBe('name');

    const key = await admin.post(
      '/v1/api-keys/workspace/service',
      { name: 'ci', workspace_id: 'team-a', scopes: ['completions.write'] },
      DRY,
    );
    expect(key.status).toBe(200);
    const update = await admin.put('/v1/workspaces/team-a', { name: 'Renamed' }, DRY);
    expect(update.status).toBe(200);
    expect((await admin.delete('/v1/workspaces/team-a', DRY)).status).toBeLessThan(500);

    // The real refusal above left its audit record; the dry runs none.
    const after = await footprint(admin);
    expect(after).toEqual({ ...before, audit: before.audit + 1 });
    expect((await admin.get('/v1/workspaces/team-a')).body).toMatchObject({ name: 'Team A', status: 'active' });
    // The key the dry run answered with does not exist.
    expect((await apiClient(t.baseUrl, key.body.key).get('/v1/providers')).status).toBe(401);
  });

  it('keeps tenant walls: a workspace key cannot dry-run a policy naming another workspace', async () => {
    const { g, a } = await startTenantPair();
    const policy = {
      conditions: [{ key: 'workspace_id', value: 'team-b' }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 0,
    };
    const dry = await a.client.post('/v1/policies/rate-limits', policy, DRY);
    expectRefused(dry, 403, 'WORKSPACE_FORBIDDEN', 'conditions[0].value');
    expect((await g.admin.get('/v1/policies/rate-limits')).body.total).toBe(0);
  });

  it('refuses a bad header value, and a dry run of a gateway request (a provider call cannot be undone)', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const bad = await admin.post('/v1/workspaces', { name: 'x' }, { 'x-service-dry-run': 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('x-service-dry-run');
    const gateway = await admin.post(
      '/v1/chat/completions',
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
      { ...DRY, 'x-service-provider': 'openai', authorization: 'Bearer sk-x' },
    );
    expect(gateway.status).toBe(400);
    expect(gateway.body.error.param).toBe('x-service-dry-run');
    expect((await admin.get('/v1/workspaces')).body.total).toBe(1);
  });
});

describe('POST /v1/dry-run: a sequence checked as one', () => {
  it('checks later requests against what earlier ones would create, stops at the first refusal, and keeps nothing', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const before = await footprint(admin);
    const requests = [
      { method: 'POST', path: '/v1/workspaces', body: { name: 'Team C', slug: 'team-c' } },
      {
        method: 'POST',
        path: '/v1/integrations',
        body: { name: 'OpenAI', slug: 'oai', ai_provider_id: 'openai', key: 'sk-test-1234567890abcdef' },
      },
      {
        method: 'POST',
        path: '/v1/providers',
        body: { name: 'OpenAI', slug: 'oai', integration_id: 'oai', workspace_id: 'team-c' },
      },
    ];
    const ok = await admin.post('/v1/dry-run', { requests });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ object: 'dry_run', ok: true });
    expect(ok.body.results.map((r: { status: number }) => r.status)).toEqual([200, 200, 200]);
    expect(JSON.stringify(ok.body)).not.toContain('sk-test');

    const failing = await admin.post('/v1/dry-run', {
      requests: [
        ...requests,
        { method: 'POST', path: '/v1/workspaces', body: { name: 'Dup', slug: 'team-c' } },
        { method: 'POST', path: '/v1/workspaces', body: { name: 'Never', slug: 'never' } },
      ],
    });
    expect(failing.body.ok).toBe(false);
    expect(failing.body.results).toHaveLength(4);
    expect(failing.body.results[3]).toMatchObject({ path: '/v1/workspaces', status: 409 });
    expect(failing.body.results[3].error.message).toContain('team-c');

    expect(await footprint(admin)).toEqual(before);
    // The server still answers other requests normally afterwards.
    expect((await admin.post('/v1/workspaces', { name: 'Team C', slug: 'team-c' })).status).toBe(200);
  });

  it('runs each request as the caller: a workspace key is refused where it would be', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const a = await createWorkspace(admin, 'Team A', 'team-a');
    const { key } = await createWorkspaceKey(admin, { workspace_id: a.id, scopes: ['workspaces.read'] });
    const res = await apiClient(t.baseUrl, key).post('/v1/dry-run', {
      requests: [{ method: 'POST', path: '/v1/workspaces', body: { name: 'Mine', slug: 'mine' } }],
    });
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(false);
    expect(res.body.results[0].status).toBe(403);
    expect((await admin.get('/v1/workspaces')).body.total).toBe(2);
  });
});
