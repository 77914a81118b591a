import { describe, expect, it } from 'vitest';
import { WORKSPACE_SCOPES } from '../../src/auth/scopes.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] };

/** An integration with a provider in workspaces A and B, and a workspace key of each (every upstream host is the mock). */
async function setUp() {
  const g = await startGateway({ routeAllHostsToMock: true });
  const admin = g.admin;
  const a = await createWorkspace(admin, 'Team A', 'team-a');
  const b = await createWorkspace(admin, 'Team B', 'team-b');
  const c = await createWorkspace(admin, 'Team C', 'team-c');
  const integration = await admin.post('/v1/integrations', {
    name: 'Shared OpenAI',
    slug: 'shared-openai',
    ai_provider_id: 'openai',
    key: 'sk-shared-0000000000000000000000',
    workspace_id: 'team-a',
  });
  expect(integration.status, JSON.stringify(integration.body)).toBe(200);
  const inB = await admin.post('/v1/providers', {
    name: 'Shared in B',
    slug: 'shared-openai',
    integration_id: integration.body.id,
    workspace_id: 'team-b',
  });
  expect(inB.status).toBe(200);
  const key = async (workspace: string) =>
    apiClient(
      g.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: workspace, scopes: [...WORKSPACE_SCOPES] })).key,
    );
  return { g, admin, a, b, c, integration: integration.body, keyA: await key('team-a'), keyB: await key('team-b') };
}

describe('/v1/integrations/{slug}/workspaces: which workspaces may use an integration', () => {
  it('every workspace may by default; a disabled one loses its providers at once, on the gateway too', async () => {
    const { g, admin, a, b, c, keyA, keyB } = await setUp();
    const initial = await admin.get('/v1/integrations/shared-openai/workspaces');
    expect(initial.status).toBe(200);
    expect(initial.body.global_workspace_access).toEqual({ enabled: true });
    const byId = (body: any) => Object.fromEntries(body.workspaces.map((w: any) => [w.slug, w.enabled]));
    expect(byId(initial.body)).toMatchObject({ 'team-a': true, 'team-b': true, 'team-c': true, default: true });
    expect(initial.body.total).toBe(initial.body.workspaces.length);
    expect(initial.body.workspaces.find((w: any) => w.id === b.id)).toEqual({
      id: b.id,
      slug: 'team-b',
      enabled: true,
      usage_limits: null,
      rate_limits: null,
    });
    const viaB = { 'x-service-provider': '@shared-openai' };
    expect((await keyB.post('/v1/chat/completions', chat, viaB)).status).toBe(200);
    const calls = g.mock.requests.length;

    expect(
      (await admin.put('/v1/integrations/shared-openai/workspaces', { workspaces: [{ id: 'team-b', enabled: false }] }))
        .status,
    ).toBe(200);
    expect(byId((await admin.get('/v1/integrations/shared-openai/workspaces')).body)).toMatchObject({
      'team-a': true,
      'team-b': false,
      'team-c': true,
    });
    // B's provider no longer resolves, and is not offered; A's still works.
    const refused = await keyB.post('/v1/chat/completions', chat, viaB);
    expect(refused.status).toBe(404);
    expect(refused.body.error.param).toBe('x-service-provider');
    expect(g.mock.requests.length).toBe(calls);
    const models = await keyB.get('/v1/models');
    expect(JSON.stringify(models.body)).not.toContain('@shared-openai');
    expect((await keyA.post('/v1/chat/completions', chat, { 'x-service-provider': '@shared-openai' })).status).toBe(
      200,
    );
    // No new provider from it in B.
    const made = await admin.post('/v1/providers', {
      name: 'Again',
      integration_id: 'shared-openai',
      workspace_id: b.id,
    });
    expect(made.status).toBe(403);
    expect(made.body.error).toMatchObject({ code: 'INTEGRATION_NOT_ENABLED', param: 'integration_id' });

    // Enabling C makes a provider there (the reference's create_default_provider, default true); B again too.
    expect(
      (
        await admin.put('/v1/integrations/shared-openai/workspaces', {
          workspaces: [
            { id: c.id, enabled: true },
            { id: 'team-b', enabled: true },
          ],
        })
      ).status,
    ).toBe(200);
    const inC = await admin.get(`/v1/providers/shared-openai?workspace_id=${c.id}`);
    expect(inC.status).toBe(200);
    expect(inC.body).toMatchObject({
      workspace_id: c.id,
      integration_id: (await admin.get('/v1/integrations/shared-openai')).body.id,
    });
    expect((await admin.get(`/v1/providers?workspace_id=${b.id}`)).body.total).toBe(1); // B had one: none added
    expect((await keyB.post('/v1/chat/completions', chat, viaB)).status).toBe(200);
    expect(a.id).toBeDefined();
  });

  it('global_workspace_access turns every workspace without its own setting off; override forgets the settings', async () => {
    const { admin, keyA, keyB } = await setUp();
    const put = (body: unknown) => admin.put('/v1/integrations/shared-openai/workspaces', body);
    expect(
      (
        await put({
          global_workspace_access: { enabled: false },
          workspaces: [{ id: 'team-a', enabled: true, create_default_provider: false }],
        })
      ).status,
    ).toBe(200);
    let listed = (await admin.get('/v1/integrations/shared-openai/workspaces')).body;
    expect(listed.global_workspace_access).toEqual({ enabled: false });
    expect(listed.workspaces.filter((w: any) => w.enabled).map((w: any) => w.slug)).toEqual(['team-a']);
    expect((await keyB.post('/v1/chat/completions', chat, { 'x-service-provider': '@shared-openai' })).status).toBe(
      404,
    );
    expect((await keyA.post('/v1/chat/completions', chat, { 'x-service-provider': '@shared-openai' })).status).toBe(
      200,
    );

    expect(
      (await put({ global_workspace_access: { enabled: false }, override_existing_workspace_access: true })).status,
    ).toBe(200);
    listed = (await admin.get('/v1/integrations/shared-openai/workspaces')).body;
    expect(listed.workspaces.every((w: any) => !w.enabled)).toBe(true);
    expect((await keyA.post('/v1/chat/completions', chat, { 'x-service-provider': '@shared-openai' })).status).toBe(
      404,
    );
    expect((await put({ global_workspace_access: { enabled: true }, create_default_provider: false })).status).toBe(
      200,
    );
    expect((await keyA.post('/v1/chat/completions', chat, { 'x-service-provider': '@shared-openai' })).status).toBe(
      200,
    );
    // Audited as a change of the integration.
    const audit = await admin.get('/v1/audit-logs?resource_type=integration&page_size=100');
    expect(audit.body.data.filter((r: any) => r.action === 'update_workspaces')).toHaveLength(3);
  });

  it('refuses what it does not support, unknown workspaces, archived integrations and workspace keys', async () => {
    const { admin, keyA } = await setUp();
    const put = (body: unknown) => admin.put('/v1/integrations/shared-openai/workspaces', body);
    const cases: Array<[unknown, number, string, RegExp]> = [
      [
        { workspaces: [{ id: 'team-a', enabled: true, usage_limits: [{ credit_limit: 10 }] }] },
        400,
        'workspaces[0].usage_limits',
        /usage-limits policy/,
      ],
      [
        { workspaces: [{ id: 'team-a', enabled: true, rate_limits: [{ type: 'requests', unit: 'rpm', value: 5 }] }] },
        400,
        'workspaces[0].rate_limits',
        /rate-limits policy/,
      ],
      [
        { workspaces: [{ id: 'team-a', enabled: true, reset_usage: true }] },
        400,
        'workspaces[0].reset_usage',
        /not supported/,
      ],
      [
        { global_workspace_access: { enabled: true, usage_limits: [{}] } },
        400,
        'global_workspace_access.usage_limits',
        /not supported/,
      ],
      [{ workspaces: [{ id: 'no-such-team', enabled: true }] }, 404, 'workspaces[0].id', /not found/],
      [
        {
          workspaces: [
            { id: 'team-a', enabled: true },
            { id: 'team-a', enabled: false },
          ],
        },
        400,
        'workspaces[1].id',
        /twice/,
      ],
      [{}, 400, 'body', /send workspaces, global_workspace_access or both/],
    ];
    for (const [body, status, param, message] of cases) {
      const res = await put(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error.param).toBe(param);
      expect(res.body.error.message).toMatch(message);
    }
    // null and [] mean "no limits" and are taken.
    expect(
      (await put({ workspaces: [{ id: 'team-a', enabled: true, usage_limits: null, rate_limits: [] }] })).status,
    ).toBe(200);
    const wsKey = await keyA.get('/v1/integrations/shared-openai/workspaces');
    expect(wsKey.status).toBe(403);
    expect(wsKey.body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');
    expect((await admin.get('/v1/integrations/nothing-here/workspaces')).status).toBe(404);
    await admin.delete('/v1/integrations/shared-openai');
    const archived = await put({ workspaces: [{ id: 'team-a', enabled: false }] });
    expect(archived.status).toBe(400);
  });
});
