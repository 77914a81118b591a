import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const KEY = 'sk-proj-TESTSECRET-0123456789abcdefWXYZ';
const NEW_KEY = 'sk-proj-ROTATED-9876543210fedcbaQRST';

async function principalOf(t: TestServer, key: string): Promise<Principal> {
  const result = await t.server.keys.verify(key);
  if (!result.ok) throw new Error(`key not valid: ${result.reason}`);
  return result.principal;
}

const openai = (overrides: Record<string, unknown> = {}) => ({
  name: 'OpenAI prod',
  slug: 'openai-prod',
  ai_provider_id: 'openai',
  key: KEY,
  ...overrides,
});

describe('integrations: create, read, list', () => {
  it('creates an integration with its default provider and serves it back with the key masked', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post(
      '/v1/integrations',
      openai({
        description: 'Main account',
        configurations: { openai_organization: 'org-123', custom_host: 'https://proxy.example.com/v1' },
        tags: { env: 'prod', team: 'ml' },
      }),
    );
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['id', 'object', 'slug']);
    expect(created.body).toMatchObject({ slug: 'openai-prod', object: 'integration' });

    for (const ref of ['openai-prod', created.body.id]) {
      const got = await admin.get(`/v1/integrations/${ref}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        id: created.body.id,
        organisation_id: t.server.bootstrap.organisationId,
        slug: 'openai-prod',
        name: 'OpenAI prod',
        ai_provider_id: 'openai',
        description: 'Main account',
        masked_key: 'sk-p****WXYZ',
        configurations: { openai_organization: 'org-123', custom_host: 'https://proxy.example.com/v1' },
        tags: { env: 'prod', team: 'ml' },
        status: 'active',
        created_at: expect.any(String),
        last_updated_at: expect.any(String),
        last_reset_at: null,
        allow_all_models: true,
        secret_mappings: [],
        // The reference's detail fields: every workspace may use it, and there is one.
        global_workspace_access_settings: { enabled: true },
        workspace_count: 1,
        pricing_adjustments: null,
        object: 'integration',
      });
    }

    // The default provider: in the default workspace, under the integration's slug.
    const provider = await admin.get('/v1/providers/openai-prod');
    expect(provider.status).toBe(200);
    expect(provider.body).toMatchObject({
      integration_id: created.body.id,
      workspace_id: t.server.bootstrap.workspaceId,
      ai_provider_id: 'openai',
      name: 'OpenAI prod',
      object: 'provider',
    });

    const resolved = await t.server.credentials.resolveProvider(
      await principalOf(t, t.adminKey),
      t.server.bootstrap.workspaceId,
      'openai-prod',
    );
    expect(resolved).toEqual({
      providerType: 'openai',
      apiKey: KEY,
      customHost: 'https://proxy.example.com/v1',
      configurations: { openai_organization: 'org-123', custom_host: 'https://proxy.example.com/v1' },
      source: { kind: 'provider', id: provider.body.id, slug: 'openai-prod', integrationId: created.body.id },
      models: { allowAll: true, entries: new Map() },
      fromSecretManager: false,
      limits: null,
    });
  });

  it('derives the slug from the name, stores provider aliases under their registry id, and places or skips the default provider', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const derived = await admin.post('/v1/integrations', { name: 'My Groq!', ai_provider_id: 'groq', key: KEY });
    expect(derived.status).toBe(200);
    expect(derived.body.slug).toMatch(/^my-groq-[0-9a-f]{6}$/);

    const alias = await admin.post('/v1/integrations', openai({ slug: 'alias', ai_provider_id: 'open-ai' }));
    expect((await admin.get(`/v1/integrations/${alias.body.slug}`)).body.ai_provider_id).toBe('openai');

    const teamA = await createWorkspace(admin, 'Team A', 'team-a');
    const placed = await admin.post(
      '/v1/integrations',
      openai({ slug: 'placed', workspace_id: 'team-a', default_provider_slug: 'team-openai' }),
    );
    expect(placed.status).toBe(200);
    const provider = await admin.get('/v1/providers/team-openai?workspace_id=team-a');
    expect(provider.body).toMatchObject({ workspace_id: teamA.id, integration_id: placed.body.id });
    expect((await admin.get('/v1/providers/placed?workspace_id=team-a')).status).toBe(404);

    const bare = await admin.post('/v1/integrations', openai({ slug: 'bare', create_default_provider: false }));
    expect(bare.status).toBe(200);
    expect((await admin.get('/v1/providers/bare')).status).toBe(404);

    // A local server needs no key.
    const local = await admin.post('/v1/integrations', { name: 'Ollama', slug: 'ollama', ai_provider_id: 'ollama' });
    expect(local.status).toBe(200);
    expect((await admin.get('/v1/integrations/ollama')).body.masked_key).toBeNull();
    expect(
      (
        await t.server.credentials.resolveProvider(
          await principalOf(t, t.adminKey),
          t.server.bootstrap.workspaceId,
          'ollama',
        )
      ).apiKey,
    ).toBeNull();
  });

  it('lists with the spec envelope, pages, and filters by tags (all pairs must match) and status', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await admin.post('/v1/integrations', openai({ slug: 'a', tags: { env: 'prod', team: 'ml' } }));
    await admin.post('/v1/integrations', openai({ slug: 'b', tags: { env: 'prod', team: 'web' } }));
    await admin.post('/v1/integrations', openai({ slug: 'c', tags: { env: 'dev', url: 'http://x:1' } }));
    await admin.post('/v1/integrations', openai({ slug: 'd' }));

    const all = await admin.get('/v1/integrations');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ object: 'list', total: 4 });
    expect(all.body.data.map((i: any) => i.slug)).toEqual(['a', 'b', 'c', 'd']);
    const slugs = async (query: string) =>
      (await admin.get(`/v1/integrations?${query}`)).body.data.map((i: any) => i.slug);
    expect(await slugs('tags=env:prod')).toEqual(['a', 'b']);
    expect(await slugs('tags=env:prod,team:ml')).toEqual(['a']);
    expect(await slugs('tags=env:prod,team:other')).toEqual([]);
    expect(await slugs(`tags=${encodeURIComponent('url:http://x:1')}`)).toEqual(['c']);
    const paged = await admin.get('/v1/integrations?tags=env:prod&page_size=1&current_page=1');
    expect(paged.body).toMatchObject({ total: 2, data: [{ slug: 'b' }] });
    expect((await admin.get('/v1/integrations?page_size=2&current_page=1')).body).toMatchObject({
      total: 4,
      data: [{ slug: 'c' }, { slug: 'd' }],
    });

    await admin.delete('/v1/integrations/d');
    expect(await slugs('status=archived')).toEqual(['d']);
    expect((await admin.get('/v1/integrations')).body.total).toBe(3);

    for (const bad of ['tags=env', 'tags=:x', 'status=gone', 'page_size=-1', 'colour=blue']) {
      const res = await admin.get(`/v1/integrations?${bad}`);
      expect(res.status, bad).toBe(400);
    }
  });
});

describe('integrations: update and delete', () => {
  it('changes name, description, key, configurations and tags, and the resolver sees the new key at once', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const principal = await principalOf(t, t.adminKey);
    const workspaceId = t.server.bootstrap.workspaceId;
    const created = await admin.post('/v1/integrations', openai({ configurations: { openai_project: 'p1' } }));
    expect((await t.server.credentials.resolveProvider(principal, workspaceId, 'openai-prod')).apiKey).toBe(KEY); // now cached

    const updated = await admin.put('/v1/integrations/openai-prod', {
      name: 'Renamed',
      description: null,
      key: NEW_KEY,
      configurations: { openai_project: 'p2', custom_host: 'http://127.0.0.1:9/v1' },
      tags: { env: 'staging' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({});
    const got = await admin.get(`/v1/integrations/${created.body.id}`);
    expect(got.body).toMatchObject({
      name: 'Renamed',
      description: null,
      masked_key: 'sk-p****QRST',
      configurations: { openai_project: 'p2', custom_host: 'http://127.0.0.1:9/v1' },
      tags: { env: 'staging' },
    });
    expect(got.body.last_updated_at >= got.body.created_at).toBe(true);

    const resolved = await t.server.credentials.resolveProvider(principal, workspaceId, 'openai-prod');
    expect(resolved).toMatchObject({
      apiKey: NEW_KEY,
      customHost: 'http://127.0.0.1:9/v1',
      configurations: { openai_project: 'p2' },
    });

    // A key can be removed (local servers need none); an empty body changes nothing and is refused.
    expect((await admin.put('/v1/integrations/openai-prod', { key: null })).status).toBe(200);
    expect((await admin.get('/v1/integrations/openai-prod')).body.masked_key).toBeNull();
    expect((await t.server.credentials.resolveProvider(principal, workspaceId, 'openai-prod')).apiKey).toBeNull();
    expect((await admin.put('/v1/integrations/openai-prod', {})).status).toBe(400);
    expect((await admin.put('/v1/integrations/openai-prod', { slug: 'new' })).body.error.param).toBe('body');
    expect((await admin.put('/v1/integrations/nope', { name: 'x' })).status).toBe(404);
  });

  it('archives on delete: the integration and its providers stop resolving, stay readable, and free their slugs', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const principal = await principalOf(t, t.adminKey);
    const workspaceId = t.server.bootstrap.workspaceId;
    const created = await admin.post('/v1/integrations', openai());
    await admin.post('/v1/providers', { name: 'Second', slug: 'second', integration_id: 'openai-prod' });
    await t.server.credentials.resolveProvider(principal, workspaceId, 'second');

    const deleted = await admin.delete('/v1/integrations/openai-prod');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({});
    expect((await admin.get('/v1/integrations/openai-prod')).body.status).toBe('archived');
    expect((await admin.get('/v1/providers/second')).body.status).toBe('archived');
    for (const slug of ['openai-prod', 'second']) {
      const error = await t.server.credentials.resolveProvider(principal, workspaceId, slug).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(error).toMatchObject({ code: 'NOT_FOUND', param: 'x-service-provider' });
      expect(error?.message).toContain(`@${slug}`);
    }
    expect((await admin.delete('/v1/integrations/openai-prod')).status).toBe(200); // idempotent
    expect((await admin.put('/v1/integrations/openai-prod', { name: 'x' })).status).toBe(400);
    expect(
      (await admin.post('/v1/providers', { name: 'Late', integration_id: created.body.id })).body.error,
    ).toMatchObject({ code: 'NOT_FOUND', param: 'integration_id' });

    // The slug is free again; by slug, the active integration is the one found.
    const again = await admin.post('/v1/integrations', openai({ key: NEW_KEY }));
    expect(again.status).toBe(200);
    expect(again.body.id).not.toBe(created.body.id);
    expect((await admin.get('/v1/integrations/openai-prod')).body).toMatchObject({
      id: again.body.id,
      status: 'active',
    });
    expect((await admin.get(`/v1/integrations/${created.body.id}`)).body.status).toBe('archived');
    expect((await t.server.credentials.resolveProvider(principal, workspaceId, 'openai-prod')).apiKey).toBe(NEW_KEY);
  });
});

describe('integrations: validation and access', () => {
  it('refuses an unknown configurations field (a typo) on create and update, naming it and listing the known ones', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const typo = await admin.post('/v1/integrations', openai({ configurations: { custom_hots: 'https://x.example' } }));
    expect(typo.status).toBe(400);
    expect(typo.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'configurations.custom_hots' });
    expect(typo.body.error.message).toMatch(/unknown provider setting custom_hots; known settings: .*custom_host/);
    expect((await admin.get('/v1/integrations')).body.total).toBe(0);

    expect((await admin.post('/v1/integrations', openai())).status).toBe(200);
    const update = await admin.put('/v1/integrations/openai-prod', { configurations: { aws_regoin: 'us-east-1' } });
    expect(update.status).toBe(400);
    expect(update.body.error.param).toBe('configurations.aws_regoin');
    expect(update.body.error.message).toContain('aws_region');
    const vk = await admin.post('/v1/virtual-keys', {
      name: 'vk',
      provider: 'openai',
      key: KEY,
      configurations: { openai_org: 'x' },
    });
    expect(vk.status).toBe(400);
    expect(vk.body.error.param).toBe('configurations.openai_org');
  });

  it('rejects every invalid body with 400 naming the parameter, and stores nothing', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ name: '' }, 'name'],
      [{ name: undefined }, 'name'],
      [{ slug: 's'.repeat(256) }, 'slug'],
      [{ slug: 'has space' }, 'slug'],
      [{ slug: '123e4567-e89b-42d3-a456-426614174000' }, 'slug'],
      [{ ai_provider_id: undefined }, 'ai_provider_id'],
      [{ ai_provider_id: 'no-such-provider' }, 'ai_provider_id'],
      [{ key: '' }, 'key'],
      [{ key: 'sk-abc\r\nx-injected: 1' }, 'key'],
      [{ configurations: { custom_host: 'ftp://files.example.com' } }, 'configurations.custom_host'],
      [{ configurations: { custom_host: 'not a url' } }, 'configurations.custom_host'],
      [{ configurations: { custom_host: 'https://user:pw@example.com/v1' } }, 'configurations.custom_host'],
      [{ configurations: { custom_host: 'https://example.com/v1?x=1' } }, 'configurations.custom_host'],
      [{ configurations: { azure_resource_name: 'evil.com/x' } }, 'configurations.azure_resource_name'],
      [{ configurations: { 'Bad-Name': 'x' } }, 'configurations.Bad-Name'],
      [{ configurations: { extra: 'x' } }, 'configurations.extra'],
      [{ configurations: 'x' }, 'configurations'],
      [{ tags: { env: 1 } }, 'tags.env'],
      [{ tags: { 'a:b': 'x' } }, 'tags.a:b'],
      [{ tags: ['x'] }, 'tags'],
      [{ description: 'd'.repeat(2049) }, 'description'],
      [{ default_provider_slug: 'bad slug' }, 'default_provider_slug'],
      [{ default_provider_slug: 'catalog' }, 'default_provider_slug'],
      [{ slug: 'catalog' }, 'slug'],
      [{ create_default_provider: 'yes' }, 'create_default_provider'],
      [{ colour: 'blue' }, 'body'],
      [{ ai_provider_id: 'cloudflare-workers-ai' }, 'configurations.custom_host'],
      [{ ai_provider_id: 'azure-openai' }, 'configurations.azure_resource_name'],
    ];
    for (const [overrides, param] of cases) {
      const res = await admin.post('/v1/integrations', { ...openai(), ...overrides });
      expect(res.status, JSON.stringify(overrides)).toBe(400);
      expect(res.body.error, JSON.stringify(overrides)).toMatchObject({ code: 'INVALID_REQUEST', param });
    }
    const unknown = await admin.post('/v1/integrations', openai({ ai_provider_id: 'no-such-provider' }));
    expect(unknown.body.error.message).toContain('no-such-provider');
    expect((await admin.get('/v1/integrations')).body.total).toBe(0);
    expect((await admin.get('/v1/providers')).body.total).toBe(0);

    // The bounds themselves are accepted, and so are providers whose host comes from configurations.
    expect(
      (await admin.post('/v1/integrations', openai({ name: 'n'.repeat(255), slug: 's'.repeat(255) }))).status,
    ).toBe(200);
    expect(
      (
        await admin.post(
          '/v1/integrations',
          openai({
            slug: 'cf',
            ai_provider_id: 'cloudflare-workers-ai',
            configurations: { custom_host: 'https://api.cloudflare.com/client/v4/accounts/abc/ai/v1' },
          }),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await admin.post(
          '/v1/integrations',
          openai({
            slug: 'az',
            ai_provider_id: 'azure-openai',
            configurations: {
              azure_resource_name: 'my-res',
              azure_deployment_name: 'gpt-4o',
              azure_api_version: '2024-10-21',
            },
          }),
        )
      ).status,
    ).toBe(200);
    const unknownWorkspace = await admin.post('/v1/integrations', openai({ slug: 'ws', workspace_id: 'nowhere' }));
    expect(unknownWorkspace.status).toBe(404);
    expect(unknownWorkspace.body.error.param).toBe('workspace_id');
  });

  it('answers 409 when the slug or the default provider slug is taken', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    expect((await admin.post('/v1/integrations', openai())).status).toBe(200);
    const dup = await admin.post('/v1/integrations', openai());
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'CONFLICT', param: 'slug' });

    const providerTaken = await admin.post(
      '/v1/integrations',
      openai({ slug: 'other', default_provider_slug: 'openai-prod' }),
    );
    expect(providerTaken.status).toBe(409);
    expect(providerTaken.body.error).toMatchObject({ code: 'CONFLICT', param: 'default_provider_slug' });
    // Nothing of the refused integration was stored (one transaction).
    expect((await admin.get('/v1/integrations/other')).status).toBe(404);
    // Without a default provider there is nothing to collide with.
    expect(
      (
        await admin.post(
          '/v1/integrations',
          openai({ slug: 'other', default_provider_slug: 'openai-prod', create_default_provider: false }),
        )
      ).status,
    ).toBe(200);
  });

  it('is for admin keys of organisation owners and admins, with the integrations scopes', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await admin.post('/v1/integrations', openai());
    const wsKey = await createWorkspaceKey(admin, {
      workspace_id: 'default',
      scopes: ['providers.list', 'providers.read'],
    });
    const workspace = apiClient(t.baseUrl, wsKey.key);
    expect((await workspace.get('/v1/integrations')).body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');
    expect((await workspace.post('/v1/integrations', openai({ slug: 'x' }))).status).toBe(403);

    const limited = await admin.post('/v1/api-keys/organisation/service', {
      name: 'reader',
      scopes: ['integrations.list'],
    });
    const reader = apiClient(t.baseUrl, limited.body.key);
    expect((await reader.get('/v1/integrations')).status).toBe(200);
    const refused = await reader.post('/v1/integrations', openai({ slug: 'x' }));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('MISSING_SCOPE');

    // An admin key whose user is no longer an owner or admin can do nothing with integrations.
    await t.server.db.updateTable('users').set({ role: 'member' }).execute();
    t.server.keys.invalidateAll();
    for (const res of [
      await admin.get('/v1/integrations'),
      await admin.get('/v1/integrations/openai-prod'),
      await admin.post('/v1/integrations', openai({ slug: 'y' })),
      await admin.delete('/v1/integrations/openai-prod'),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('ROLE_NOT_ALLOWED');
    }
  });
});

describe('credential resolver', () => {
  it('serves from memory until the TTL passes, so another instance’s change is seen within a minute', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const principal = await principalOf(t, t.adminKey);
    const workspaceId = t.server.bootstrap.workspaceId;
    await admin.post('/v1/integrations', openai());
    const first = await t.server.credentials.resolveProvider(principal, workspaceId, 'openai-prod');
    expect(first.apiKey).toBe(KEY);

    // Another instance archives the provider: this one keeps its copy until the TTL ends.
    await t.server.db.updateTable('providers').set({ status: 'archived' }).execute();
    expect(await t.server.credentials.resolveProvider(principal, workspaceId, 'openai-prod')).toBe(first);
    clock.advance(61_000);
    await expect(t.server.credentials.resolveProvider(principal, workspaceId, 'openai-prod')).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });

    // Concurrent lookups of one slug share one load.
    await t.server.db.updateTable('providers').set({ status: 'active' }).execute();
    const many = await Promise.all(
      Array.from({ length: 5 }, () => t.server.credentials.resolveProvider(principal, workspaceId, 'openai-prod')),
    );
    expect(new Set(many).size).toBe(1);
    expect(Object.isFrozen(many[0])).toBe(true);
  });

  it('refuses a workspace the caller cannot reach and slugs that cannot exist', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await admin.post('/v1/integrations', openai());
    const teamA = await createWorkspace(admin, 'Team A', 'team-a');
    const wsKey = await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['completions.write'] });
    const principal = await principalOf(t, wsKey.key);
    await expect(
      t.server.credentials.resolveProvider(principal, t.server.bootstrap.workspaceId, 'openai-prod'),
    ).rejects.toMatchObject({ code: 'WORKSPACE_FORBIDDEN' });
    // The default provider lives in the default workspace, not in team-a.
    await expect(t.server.credentials.resolveProvider(principal, teamA.id, 'openai-prod')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      param: 'x-service-provider',
    });
    const malformed = await t.server.credentials.resolveProvider(principal, teamA.id, 'sk-live key!').then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(malformed).toMatchObject({ code: 'NOT_FOUND' });
    expect(malformed?.message).not.toContain('sk-live');
  });
});
