import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const INTEGRATION_KEY = 'sk-proj-INTEGRATION-0123456789abcdefWXYZ';
const VK_KEY = 'sk-vk-VIRTUALKEY-0123456789abcdefLMNO';
const VK_KEY_2 = 'sk-vk-ROTATED-0123456789abcdefPQRS';
const CRUD = ['create', 'read', 'list', 'update', 'delete'];
const SCOPES = [...CRUD.map((v) => `providers.${v}`), ...CRUD.map((v) => `virtual_keys.${v}`)];

async function principalOf(t: TestServer, key: string): Promise<Principal> {
  const result = await t.server.keys.verify(key);
  if (!result.ok) throw new Error(`key not valid: ${result.reason}`);
  return result.principal;
}

/** An integration, two workspaces and a workspace key for each. */
async function setup() {
  const t = await startTestServer();
  const admin = apiClient(t.baseUrl, t.adminKey);
  const integration = await admin.post('/v1/integrations', {
    name: 'OpenAI',
    slug: 'openai-int',
    ai_provider_id: 'openai',
    key: INTEGRATION_KEY,
    create_default_provider: false,
  });
  expect(integration.status).toBe(200);
  const teamA = await createWorkspace(admin, 'Team A', 'team-a');
  const teamB = await createWorkspace(admin, 'Team B', 'team-b');
  const keyA = await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: SCOPES });
  const keyB = await createWorkspaceKey(admin, { workspace_id: 'team-b', scopes: SCOPES });
  return {
    t,
    admin,
    integrationId: integration.body.id as string,
    teamA,
    teamB,
    keyA: keyA.key,
    keyB: keyB.key,
    a: apiClient(t.baseUrl, keyA.key),
    b: apiClient(t.baseUrl, keyB.key),
  };
}

const expectStatus = async (call: Promise<{ status: number; body: any }>, status: number, code?: string) => {
  const res = await call;
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  if (code) expect(res.body.error.code).toBe(code);
  return res;
};

describe('providers', () => {
  it('creates, reads, lists, updates and archives a provider of a workspace', async () => {
    const { t, admin, a, integrationId, teamA, keyA } = await setup();
    const created = await a.post('/v1/providers', {
      name: 'Chat',
      slug: 'chat',
      integration_id: 'openai-int',
      note: 'for the bot',
      tags: { env: 'prod' },
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['id', 'object', 'slug']);
    expect(created.body).toMatchObject({ slug: 'chat', object: 'provider' });

    const got = await a.get('/v1/providers/chat');
    expect(got.body).toEqual({
      id: created.body.id,
      organisation_id: t.server.bootstrap.organisationId,
      workspace_id: teamA.id,
      integration_id: integrationId,
      ai_provider_id: 'openai',
      slug: 'chat',
      name: 'Chat',
      note: 'for the bot',
      tags: { env: 'prod' },
      status: 'active',
      created_at: expect.any(String),
      last_updated_at: expect.any(String),
      last_reset_at: null,
      usage_limits: null,
      rate_limits: null,
      expires_at: null,
      reset_usage: null,
      object: 'provider',
    });
    expect((await a.get(`/v1/providers/${created.body.id}`)).body.id).toBe(created.body.id);
    expect((await admin.get('/v1/providers/chat?workspace_id=team-a')).body.id).toBe(created.body.id);
    expect((await admin.get(`/v1/providers/chat?workspace_id=${teamA.id}`)).body.id).toBe(created.body.id);
    expect((await admin.get('/v1/providers/chat')).status).toBe(404); // the default workspace has none

    const principal = await principalOf(t, keyA);
    const resolved = await t.server.credentials.resolveProvider(principal, teamA.id, 'chat');
    expect(resolved).toMatchObject({
      providerType: 'openai',
      apiKey: INTEGRATION_KEY,
      customHost: null,
      source: { kind: 'provider', id: created.body.id, slug: 'chat', integrationId },
    });

    const updated = await a.put('/v1/providers/chat', { name: 'Chat 2', note: null, tags: { env: 'dev' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ id: created.body.id, slug: 'chat', object: 'provider' });
    expect((await a.get('/v1/providers/chat')).body).toMatchObject({
      name: 'Chat 2',
      note: null,
      tags: { env: 'dev' },
    });
    expect((await a.put('/v1/providers/chat', {})).status).toBe(400);
    expect((await a.put('/v1/providers/chat', { integration_id: 'other' })).body.error.param).toBe('body');

    expect((await a.delete('/v1/providers/chat')).body).toEqual({});
    expect((await a.get('/v1/providers/chat')).body.status).toBe('archived');
    expect((await a.get('/v1/providers')).body.total).toBe(0);
    expect((await a.get('/v1/providers?status=archived')).body.total).toBe(1);
    await expect(t.server.credentials.resolveProvider(principal, teamA.id, 'chat')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      param: 'x-service-provider',
    });
    expect((await a.put('/v1/providers/chat', { name: 'x' })).status).toBe(400);
    // The slug is free again.
    expect((await a.post('/v1/providers', { name: 'Chat', slug: 'chat', integration_id: integrationId })).status).toBe(
      200,
    );
  });

  it('places an admin key’s provider in the named or the default workspace, lists across workspaces, and filters by tags', async () => {
    const { t, admin, teamA } = await setup();
    const inDefault = await admin.post('/v1/providers', {
      name: 'Default one',
      integration_id: 'openai-int',
      tags: { env: 'prod', team: 'ml' },
    });
    expect(inDefault.status).toBe(200);
    expect(inDefault.body.slug).toMatch(/^default-one-[0-9a-f]{6}$/);
    expect((await admin.get(`/v1/providers/${inDefault.body.slug}`)).body.workspace_id).toBe(
      t.server.bootstrap.workspaceId,
    );
    await admin.post('/v1/providers', {
      name: 'A',
      slug: 'a',
      integration_id: 'openai-int',
      workspace_id: 'team-a',
      tags: { env: 'prod' },
    });
    // Slugs are unique per workspace: the same slug may exist in another one.
    expect((await admin.post('/v1/providers', { name: 'A too', slug: 'a', integration_id: 'openai-int' })).status).toBe(
      200,
    );

    const all = await admin.get('/v1/providers');
    expect(all.body).toMatchObject({ object: 'list', total: 3 });
    expect((await admin.get('/v1/providers?workspace_id=team-a')).body).toMatchObject({
      total: 1,
      data: [{ slug: 'a', workspace_id: teamA.id }],
    });
    expect((await admin.get('/v1/providers?tags=env:prod')).body.total).toBe(2);
    expect((await admin.get('/v1/providers?tags=env:prod,team:ml')).body).toMatchObject({
      total: 1,
      data: [{ name: 'Default one' }],
    });
    expect((await admin.get('/v1/providers?tags=env:prod&workspace_id=team-a')).body).toMatchObject({
      total: 1,
      data: [{ slug: 'a' }],
    });
    expect((await admin.get('/v1/providers?page_size=1&current_page=2')).body).toMatchObject({
      total: 3,
      data: [{ slug: 'a' }],
    });
  });

  it('validates the body: bounds, slug form, the integration, and slug conflicts', async () => {
    const { admin, a } = await setup();
    const base = { name: 'P', integration_id: 'openai-int' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ name: undefined }, 'name'],
      [{ slug: 's'.repeat(256) }, 'slug'],
      [{ slug: 'a/b' }, 'slug'],
      [{ slug: 'catalog' }, 'slug'],
      [{ integration_id: undefined }, 'integration_id'],
      [{ integration_id: 'i'.repeat(256) }, 'integration_id'],
      [{ tags: { env: ['x'] } }, 'tags.env'],
      [{ key: 'sk-should-not-be-here' }, 'body'],
    ];
    for (const [overrides, param] of cases) {
      const res = await a.post('/v1/providers', { ...base, ...overrides });
      expect(res.status, JSON.stringify(overrides)).toBe(400);
      expect(res.body.error.param, JSON.stringify(overrides)).toBe(param);
    }
    const unknown = await a.post('/v1/providers', { ...base, integration_id: 'no-such-integration' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'integration_id' });
    expect(unknown.body.error.message).toContain('no-such-integration');

    expect((await a.post('/v1/providers', { ...base, slug: 'taken', name: 'n'.repeat(255) })).status).toBe(200);
    const conflict = await a.post('/v1/providers', { ...base, slug: 'taken' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: 'CONFLICT', param: 'slug' });
    expect((await admin.post('/v1/providers', { ...base, workspace_id: 'nowhere' })).body.error).toMatchObject({
      code: 'NOT_FOUND',
      param: 'workspace_id',
    });
    expect((await a.get('/v1/providers')).body.total).toBe(1);
  });
});

describe('virtual keys', () => {
  it('creates, reads, lists, updates and archives a virtual key, and the resolver follows', async () => {
    const { t, a, teamA, keyA } = await setup();
    const created = await a.post('/v1/virtual-keys', {
      name: 'Legacy',
      slug: 'legacy',
      provider: 'openai',
      key: VK_KEY,
      note: 'old app',
      configurations: { custom_host: 'http://127.0.0.1:9/v1' },
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['data', 'id', 'object', 'slug', 'success']);
    expect(created.body).toMatchObject({ slug: 'legacy', object: 'virtual-key' });

    const got = await a.get('/v1/virtual-keys/legacy');
    expect(got.body).toEqual({
      id: created.body.id,
      organisation_id: t.server.bootstrap.organisationId,
      workspace_id: teamA.id,
      slug: 'legacy',
      name: 'Legacy',
      provider: 'openai',
      note: 'old app',
      masked_key: 'sk-v****LMNO',
      configurations: { custom_host: 'http://127.0.0.1:9/v1' },
      model_config: { custom_host: 'http://127.0.0.1:9/v1' },
      status: 'active',
      created_at: expect.any(String),
      last_updated_at: expect.any(String),
      last_reset_at: null,
      secret_mappings: [],
      usage_limits: null,
      rate_limits: null,
      expires_at: null,
      reset_usage: null,
      object: 'virtual-key',
    });
    expect((await a.get(`/v1/virtual-keys/${created.body.id}`)).body.slug).toBe('legacy');
    expect((await a.get('/v1/virtual-keys')).body).toMatchObject({
      object: 'list',
      total: 1,
      data: [{ slug: 'legacy' }],
    });

    const principal = await principalOf(t, keyA);
    expect(await t.server.credentials.resolveVirtualKey(principal, teamA.id, 'legacy')).toEqual({
      providerType: 'openai',
      apiKey: VK_KEY,
      customHost: 'http://127.0.0.1:9/v1',
      configurations: { custom_host: 'http://127.0.0.1:9/v1' },
      source: { kind: 'virtual_key', id: created.body.id, slug: 'legacy', integrationId: null },
      // Virtual keys carry no model list: any model.
      models: null,
      fromSecretManager: false,
      limits: null,
    });
    // Providers are the newer name for virtual keys: `@legacy` finds it too.
    expect((await t.server.credentials.resolveProvider(principal, teamA.id, 'legacy')).source.kind).toBe('virtual_key');

    expect(
      (await a.put('/v1/virtual-keys/legacy', { name: 'Legacy 2', note: null, key: VK_KEY_2, configurations: {} }))
        .body,
    ).toEqual({});
    expect((await a.get('/v1/virtual-keys/legacy')).body).toMatchObject({
      name: 'Legacy 2',
      note: null,
      masked_key: 'sk-v****PQRS',
      configurations: {},
    });
    expect(await t.server.credentials.resolveVirtualKey(principal, teamA.id, 'legacy')).toMatchObject({
      apiKey: VK_KEY_2,
      customHost: null,
    });
    expect((await a.put('/v1/virtual-keys/legacy', { provider: 'groq' })).body.error.param).toBe('body');

    expect((await a.delete('/v1/virtual-keys/legacy')).body).toEqual({});
    expect((await a.get('/v1/virtual-keys/legacy')).body.status).toBe('archived');
    expect((await a.get('/v1/virtual-keys')).body.total).toBe(0);
    await expect(t.server.credentials.resolveVirtualKey(principal, teamA.id, 'legacy')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      param: 'x-service-virtual-key',
    });
  });

  it('validates the body, and slugs are unique across the organisation', async () => {
    const { admin, a, b } = await setup();
    const base = { name: 'VK', provider: 'openai', key: VK_KEY };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ slug: 's'.repeat(256) }, 'slug'],
      [{ provider: undefined }, 'provider'],
      [{ provider: 'no-such-provider' }, 'provider'],
      [{ key: undefined }, 'key'],
      [{ key: '' }, 'key'],
      [{ configurations: { custom_host: 'file:///etc/passwd' } }, 'configurations.custom_host'],
      [{ configurations: { azure_api_version: '2024/../x' } }, 'configurations.azure_api_version'],
      [{ provider: 'predibase' }, 'configurations.custom_host'],
      [{ rate_limits: {} }, 'rate_limits'],
      [{ unknownField: 1 }, 'body'],
    ];
    for (const [overrides, param] of cases) {
      const res = await a.post('/v1/virtual-keys', { ...base, ...overrides });
      expect(res.status, JSON.stringify(overrides)).toBe(400);
      expect(res.body.error.param, JSON.stringify(overrides)).toBe(param);
    }
    expect((await a.post('/v1/virtual-keys', { ...base, slug: 'shared' })).status).toBe(200);
    const conflict = await b.post('/v1/virtual-keys', { ...base, slug: 'shared' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: 'CONFLICT', param: 'slug' });
    expect(
      (
        await admin.post('/v1/virtual-keys', {
          ...base,
          provider: 'azure',
          configurations: { azure_resource_name: 'res', azure_deployment_name: 'gpt-4o' },
        })
      ).status,
    ).toBe(200);
    expect((await admin.get('/v1/virtual-keys')).body.data.map((k: any) => k.provider)).toEqual([
      'openai',
      'azure-openai',
    ]);
  });
});

describe('workspace isolation', () => {
  async function expectForbidden(b: ApiClient, paths: { provider: string; vk: string }) {
    await expectStatus(b.get(`/v1/providers/${paths.provider}`), 403, 'WORKSPACE_FORBIDDEN');
    await expectStatus(b.put(`/v1/providers/${paths.provider}`, { name: 'mine now' }), 403, 'WORKSPACE_FORBIDDEN');
    await expectStatus(b.delete(`/v1/providers/${paths.provider}`), 403, 'WORKSPACE_FORBIDDEN');
    await expectStatus(b.get(`/v1/virtual-keys/${paths.vk}`), 403, 'WORKSPACE_FORBIDDEN');
    await expectStatus(
      b.put(`/v1/virtual-keys/${paths.vk}`, { key: 'sk-stolen-0123456789' }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
    await expectStatus(b.delete(`/v1/virtual-keys/${paths.vk}`), 403, 'WORKSPACE_FORBIDDEN');
  }

  it('keeps a workspace key out of another workspace’s providers and virtual keys', async () => {
    const { t, a, b, admin, teamA, teamB, keyB } = await setup();
    const provider = (await a.post('/v1/providers', { name: 'A', slug: 'prov-a', integration_id: 'openai-int' })).body;
    const vk = (await a.post('/v1/virtual-keys', { name: 'A', slug: 'vk-a', provider: 'openai', key: VK_KEY })).body;

    // By id: found, and refused.
    await expectForbidden(b, { provider: provider.id, vk: vk.id });
    // Virtual-key slugs are organisation-wide: found, and refused.
    await expectStatus(b.get('/v1/virtual-keys/vk-a'), 403, 'WORKSPACE_FORBIDDEN');
    // Provider slugs are per workspace: B's own workspace has none by that name, and naming A's is refused.
    await expectStatus(b.get('/v1/providers/prov-a'), 404, 'NOT_FOUND');
    await expectStatus(b.get('/v1/providers/prov-a?workspace_id=team-a'), 403, 'WORKSPACE_FORBIDDEN');
    await expectStatus(b.get(`/v1/providers?workspace_id=${teamA.id}`), 403, 'WORKSPACE_FORBIDDEN');
    await expectStatus(b.get('/v1/virtual-keys?workspace_id=team-a'), 403, 'WORKSPACE_FORBIDDEN');
    await expectStatus(
      b.post('/v1/providers', { name: 'X', integration_id: 'openai-int', workspace_id: 'team-a' }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
    await expectStatus(
      b.post('/v1/virtual-keys', { name: 'X', provider: 'openai', key: VK_KEY, workspace_id: 'team-a' }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
    expect((await b.get('/v1/providers')).body.total).toBe(0);
    expect((await b.get('/v1/virtual-keys')).body.total).toBe(0);

    // Nothing changed, and A's credentials still resolve for A only.
    expect((await a.get('/v1/providers/prov-a')).body).toMatchObject({ name: 'A', status: 'active' });
    expect((await a.get('/v1/virtual-keys/vk-a')).body).toMatchObject({ status: 'active', masked_key: 'sk-v****LMNO' });
    const principalB = await principalOf(t, keyB);
    await expect(t.server.credentials.resolveProvider(principalB, teamA.id, 'prov-a')).rejects.toMatchObject({
      code: 'WORKSPACE_FORBIDDEN',
    });
    await expect(t.server.credentials.resolveVirtualKey(principalB, teamB.id, 'vk-a')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      param: 'x-service-virtual-key',
    });

    // The admin key reaches both workspaces.
    expect((await admin.get(`/v1/providers/${provider.id}`)).status).toBe(200);
    expect((await admin.get('/v1/virtual-keys/vk-a')).status).toBe(200);
    expect((await admin.get('/v1/virtual-keys')).body.total).toBe(1);
  });

  it('requires the providers and virtual_keys scopes', async () => {
    const { t, admin } = await setup();
    const narrow = await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['providers.list'] });
    const client = apiClient(t.baseUrl, narrow.key);
    expect((await client.get('/v1/providers')).status).toBe(200);
    await expectStatus(client.post('/v1/providers', { name: 'X', integration_id: 'openai-int' }), 403, 'MISSING_SCOPE');
    await expectStatus(client.get('/v1/virtual-keys'), 403, 'MISSING_SCOPE');
    await expectStatus(
      client.post('/v1/virtual-keys', { name: 'X', provider: 'openai', key: VK_KEY }),
      403,
      'MISSING_SCOPE',
    );
  });
});
