import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../helpers/http.js';
import { chat, expectRefused, startTenantPair } from '../helpers/tenant-pair.js';

const B_SECRET = 'sk-team-b-STORED-0123456789abcdef';
const B_VK_SECRET = 'sk-team-b-VIRTUAL-0123456789abcdef';

/** Two workspaces; team-b has a stored provider (`@b-openai`), a virtual key and a config using them. */
async function withStoredCredentials() {
  const pair = await startTenantPair();
  const { g, b } = pair;
  const integration = await g.admin.post('/v1/integrations', {
    name: 'B OpenAI',
    slug: 'b-int',
    ai_provider_id: 'openai',
    key: B_SECRET,
    configurations: { custom_host: g.mock.baseUrl },
    create_default_provider: false,
  });
  expect(integration.status, JSON.stringify(integration.body)).toBe(200);
  expect(
    (await b.client.post('/v1/providers', { name: 'B chat', slug: 'b-openai', integration_id: 'b-int' })).status,
  ).toBe(200);
  const vk = await b.client.post('/v1/virtual-keys', {
    name: 'B legacy',
    provider: 'openai',
    key: B_VK_SECRET,
    configurations: { custom_host: g.mock.baseUrl },
  });
  expect(vk.status).toBe(200);
  const config = await b.client.post('/v1/configs', {
    name: 'B routing',
    slug: 'b-routing',
    config: { provider: '@b-openai' },
  });
  expect(config.status).toBe(200);
  return { ...pair, vkSlug: vk.body.slug as string, configId: config.body.id as string };
}

/** Authorization headers the mock upstream received: no request of A may carry B's stored keys. */
const upstreamKeys = (g: { mock: { requests: Array<{ headers: Record<string, unknown> }> } }) =>
  g.mock.requests.map((r) => r.headers.authorization);

describe('tenant walls: gateway credentials and configs', () => {
  it("never lets A's requests use B's stored provider or virtual key, named directly, in an inline config or in A's own config", async () => {
    const { g, a, b, vkSlug } = await withStoredCredentials();
    const own = await a.client.post('/v1/configs', {
      name: 'A names B',
      slug: 'a-names-b',
      config: { strategy: { mode: 'fallback' }, targets: [{ provider: '@b-openai' }, { virtual_key: vkSlug }] },
    });
    // Names only: slugs resolve in the workspace of the request, at request time.
    expect(own.status).toBe(200);

    expectRefused(
      await a.client.post('/v1/chat/completions', chat, { 'x-service-provider': '@b-openai' }),
      404,
      'NOT_FOUND',
      'x-service-provider',
    );
    expectRefused(
      await a.client.post('/v1/chat/completions', chat, { 'x-service-virtual-key': vkSlug }),
      404,
      'NOT_FOUND',
      'x-service-virtual-key',
    );
    expect(
      (
        await a.client.post('/v1/chat/completions', chat, {
          'x-service-config': JSON.stringify({ provider: '@b-openai' }),
        })
      ).status,
    ).toBe(404);
    expect((await a.client.post('/v1/chat/completions', chat, { 'x-service-config': 'a-names-b' })).status).toBe(404);
    expectRefused(
      await a.client.post('/v1/chat/completions', chat, { 'x-service-config': 'b-routing' }),
      400,
      'CONFIG_NOT_FOUND',
      'x-service-config',
    );
    expect(g.mock.requests).toHaveLength(0);

    // B's own traffic still uses its credentials.
    expect((await b.client.post('/v1/chat/completions', chat, { 'x-service-config': 'b-routing' })).status).toBe(200);
    expect((await b.client.post('/v1/chat/completions', chat, { 'x-service-virtual-key': vkSlug })).status).toBe(200);
    expect(upstreamKeys(g)).toEqual([`Bearer ${B_SECRET}`, `Bearer ${B_VK_SECRET}`]);
  });

  it('refuses a config created in, or read and changed through, another workspace', async () => {
    const { g, a, b } = await withStoredCredentials();
    expectRefused(
      await a.client.post('/v1/configs', { name: 'into B', workspace_id: 'team-b', config: { provider: '@b-openai' } }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
    expectRefused(await a.client.get('/v1/configs/b-routing'), 403, 'WORKSPACE_FORBIDDEN');
    expectRefused(
      await a.client.put('/v1/configs/b-routing', {
        config: { provider: 'openai', custom_host: g.mock.baseUrl, api_key: 'sk-a' },
      }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
    expect((await b.client.get('/v1/configs/b-routing')).body).toMatchObject({
      version: 1,
      config: { provider: '@b-openai' },
    });
    expect((await b.client.post('/v1/chat/completions', chat, { 'x-service-config': 'b-routing' })).status).toBe(200);
  });
});

describe('tenant walls: API keys', () => {
  it("refuses a key default naming another workspace's config, on create and update, whoever asks", async () => {
    const { g, a, b, configId } = await withStoredCredentials();
    const scopes = ['completions.write'];
    for (const config_id of ['b-routing', configId]) {
      expectRefused(
        await a.client.post('/v1/api-keys/workspace/service', { name: 'a svc', scopes, defaults: { config_id } }),
        403,
        'WORKSPACE_FORBIDDEN',
        'defaults.config_id',
      );
    }
    // An admin key cannot make a team-a key default to team-b's config either.
    expectRefused(
      await g.admin.post('/v1/api-keys/workspace/service', {
        name: 'a svc',
        workspace_id: 'team-a',
        scopes,
        defaults: { config_id: 'b-routing' },
      }),
      403,
      'WORKSPACE_FORBIDDEN',
      'defaults.config_id',
    );
    expectRefused(
      await a.client.put(`/v1/api-keys/${a.keyId}`, { defaults: { config_id: 'b-routing' } }),
      403,
      'WORKSPACE_FORBIDDEN',
      'defaults.config_id',
    );
    expect((await a.client.get(`/v1/api-keys/${a.keyId}`)).body.defaults ?? null).toBeNull();
    expect(g.mock.requests).toHaveLength(0);
    expect((await b.client.post('/v1/chat/completions', chat, { 'x-service-config': 'b-routing' })).status).toBe(200);
  });

  it('refuses keys made in another workspace or for a user who is not a member of the workspace', async () => {
    const { a, b } = await startTenantPair();
    expectRefused(
      await a.client.post('/v1/api-keys/workspace/service', {
        name: 'into B',
        workspace_id: 'team-b',
        scopes: ['completions.write'],
      }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
    expectRefused(
      await a.client.post('/v1/api-keys/workspace/user', {
        name: "B's user",
        scopes: ['completions.write'],
        user_id: b.userId,
      }),
      404,
      'NOT_FOUND',
      'user_id',
    );
    expectRefused(await a.client.get(`/v1/api-keys/${b.keyId}`), 403, 'WORKSPACE_FORBIDDEN');
    expectRefused(await a.client.delete(`/v1/api-keys/${b.keyId}`), 403, 'WORKSPACE_FORBIDDEN');
    const bKeys = (await b.client.get('/v1/api-keys')).body.data.map((k: { id: string; status: string }) => [
      k.id,
      k.status,
    ]);
    expect(bKeys).toEqual([[b.keyId, 'active']]);
  });
});

describe('tenant walls: members', () => {
  it('refuses adding, changing or removing members of another workspace', async () => {
    const { a, b } = await startTenantPair();
    expectRefused(
      await a.client.post('/v1/workspaces/team-b/members', { users: [{ id: a.userId, role: 'admin' }] }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
    expectRefused(
      await a.client.put(`/v1/workspaces/team-b/members/${b.userId}`, { role: 'member' }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
    expectRefused(await a.client.delete(`/v1/workspaces/team-b/members/${b.userId}`), 403, 'WORKSPACE_FORBIDDEN');
    expectRefused(await a.client.get('/v1/workspaces/team-b/members'), 403, 'WORKSPACE_FORBIDDEN');
    const members = (await b.client.get('/v1/workspaces/team-b/members')).body.data.map(
      (m: { id: string; role: string }) => [m.id, m.role],
    );
    expect(members).toEqual([[b.userId, 'admin']]);
  });
});

/** The export file as text (the JSON client would parse a one-line file as one object). */
async function download(baseUrl: string, key: string, id: string): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/logs/exports/${id}/download?format=jsonl`, {
    headers: { 'x-service-api-key': key },
  });
  expect(res.status).toBe(200);
  return res.text();
}

async function finished(client: ApiClient, id: string): Promise<{ status: string; rows_written: number }> {
  for (let i = 0; i < 400; i++) {
    const res = await client.get(`/v1/logs/exports/${id}`);
    if (res.body.status !== 'in_progress') return res.body;
    await sleep(25);
  }
  throw new Error('the export did not finish');
}

describe('tenant walls: observability', () => {
  it("keeps feedback given by A on B's trace id out of B's logs and trace", async () => {
    const { g, a, b } = await startTenantPair();
    expect(
      (await b.client.post('/v1/chat/completions', chat, { ...g.viaMock, 'x-service-trace-id': 'trace-of-b' })).status,
    ).toBe(200);
    const [log] = await g.logs(1);
    // Accepted (a trace id is a name, and refusing would tell A it exists), but kept in A.
    const given = await a.client.post('/v1/feedback', { trace_id: 'trace-of-b', value: -10 });
    expect(given.status).toBe(200);
    expect((await b.client.get(`/v1/logs/${log.id}`)).body.feedback).toEqual([]);
    expect((await b.client.get('/v1/traces/trace-of-b')).body.feedback).toEqual([]);
    expect((await g.admin.get('/v1/traces/trace-of-b')).body.feedback).toEqual([]);
    // B's own feedback cannot be changed by A.
    const own = await b.client.post('/v1/feedback', { trace_id: 'trace-of-b', value: 9 });
    expectRefused(await a.client.put(`/v1/feedback/${own.body.feedback_ids[0]}`, { value: -10 }), 404, 'NOT_FOUND');
    expect((await b.client.get('/v1/traces/trace-of-b')).body.feedback).toMatchObject([
      { value: 9, workspace_id: b.id },
    ]);
  });

  it("keeps A's log exports inside A, whatever workspace or keys the filters name", async () => {
    const { g, a, b } = await startTenantPair();
    expect(
      (await b.client.post('/v1/chat/completions', chat, { ...g.viaMock, 'x-service-trace-id': 'trace-of-b' })).status,
    ).toBe(200);
    expect(
      (await a.client.post('/v1/chat/completions', chat, { ...g.viaMock, 'x-service-trace-id': 'trace-of-a' })).status,
    ).toBe(200);
    await g.logs(2);
    const fields = ['id', 'trace_id'];
    expectRefused(
      await a.client.post('/v1/logs/exports', { workspace_id: 'team-b', filters: {}, requested_data: fields }),
      403,
      'WORKSPACE_FORBIDDEN',
    );

    // Naming B's key narrows A's own logs to nothing: the workspace bound comes first.
    const created = await a.client.post('/v1/logs/exports', {
      filters: { api_key_ids: [b.keyId] },
      requested_data: fields,
    });
    expect(created.body).toMatchObject({ total: 0 });
    expect((await a.client.post(`/v1/logs/exports/${created.body.id}/start`)).status).toBe(200);
    expect(await finished(a.client, created.body.id)).toMatchObject({ status: 'success', rows_written: 0 });
    expect(await download(g.baseUrl, a.key, created.body.id)).toBe('');

    const everything = await a.client.post('/v1/logs/exports', { filters: {}, requested_data: fields });
    expect(everything.body.total).toBe(1);
    await a.client.post(`/v1/logs/exports/${everything.body.id}/start`);
    await finished(a.client, everything.body.id);
    const lines = (await download(g.baseUrl, a.key, everything.body.id)).trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).trace_id)).toEqual(['trace-of-a']);

    // B neither sees A's exports nor is seen by A's.
    expect((await b.client.get('/v1/logs/exports')).body.total).toBe(0);
    expectRefused(await b.client.get(`/v1/logs/exports/${everything.body.id}`), 404, 'NOT_FOUND');
  });
});
