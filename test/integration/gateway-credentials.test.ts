import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

describe('gateway: the four credential modes', () => {
  it('@provider-slug: uses the stored, encrypted credential of an integration', async () => {
    const g = await startGateway();
    const created = await g.admin.post('/v1/integrations', {
      name: 'Mock OpenAI',
      slug: 'mock-openai',
      ai_provider_id: 'openai',
      key: 'sk-stored-secret',
      configurations: { custom_host: g.mock.baseUrl },
    });
    expect(created.status).toBe(200);
    const completion = await g
      .openai({ 'x-service-provider': '@mock-openai' }, { apiKey: 'ignored' })
      .chat.completions.create(chat as any);
    expect(completion.object).toBe('chat.completion');
    expect(g.mock.requests[0]!.headers.authorization).toBe('Bearer sk-stored-secret');
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ provider: 'openai', credential_source: 'provider:mock-openai', status_code: 200 });
    expect(g.logLines.join('\n')).not.toContain('sk-stored-secret');

    const unknown = await g
      .openai({ 'x-service-provider': '@nope' })
      .chat.completions.create(chat as any)
      .catch((e) => e);
    expect(unknown.status).toBe(404);
    expect(g.mock.requests).toHaveLength(1);
  });

  it('provider name + Authorization: calls the provider’s own URL with the client’s key', async () => {
    const g = await startGateway({ routeAllHostsToMock: true });
    await g.openai({ 'x-service-provider': 'groq' }, { apiKey: 'gsk-client-key' }).chat.completions.create(chat as any);
    const upstream = g.mock.requests[0]!;
    expect(upstream.headers.host).toBe('api.groq.com');
    expect(upstream.url).toBe('/openai/v1/chat/completions');
    expect(upstream.headers.authorization).toBe('Bearer gsk-client-key');
    expect((await g.logs(1))[0]).toMatchObject({ provider: 'groq', credential_source: 'direct' });

    await g
      .openai(
        {
          'x-service-provider': 'azure-openai',
          'x-service-azure-resource-name': 'myres',
          'x-service-azure-deployment-id': 'gpt4o-prod',
        },
        { apiKey: 'azure-key' },
      )
      .chat.completions.create(chat as any);
    const azure = g.mock.requests[1]!;
    expect(azure.headers.host).toBe('myres.openai.azure.com');
    expect(azure.url).toMatch(/^\/openai\/deployments\/gpt4o-prod\/chat\/completions\?api-version=/);
    expect(azure.headers['api-key']).toBe('azure-key');
    expect(azure.headers.authorization).toBeUndefined();
  });

  it('custom host: reaches a private deployment with the named provider type', async () => {
    const g = await startGateway();
    await g
      .openai({ 'x-service-provider': 'vllm', 'x-service-custom-host': g.mock.baseUrl }, { apiKey: 'local' })
      .chat.completions.create(chat as any);
    expect(g.mock.requests[0]!.url).toBe('/v1/chat/completions');
    expect((await g.logs(1))[0]).toMatchObject({ provider: 'vllm', credential_source: 'custom_host' });
    const bad = await g.admin.post('/v1/chat/completions', chat, {
      'x-service-provider': 'openai',
      'x-service-custom-host': 'ftp://example',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('x-service-custom-host');
  });

  it('legacy virtual key: a workspace-scoped stored credential', async () => {
    const g = await startGateway();
    const vk = await g.admin.post('/v1/virtual-keys', {
      name: 'legacy',
      provider: 'openai',
      key: 'sk-virtual-secret',
      configurations: { custom_host: g.mock.baseUrl },
    });
    expect(vk.status).toBe(200);
    await g.openai({ 'x-service-virtual-key': vk.body.slug }).chat.completions.create(chat as any);
    expect(g.mock.requests[0]!.headers.authorization).toBe('Bearer sk-virtual-secret');
    expect((await g.logs(1))[0].credential_source).toBe(`virtual_key:${vk.body.slug}`);

    // Another workspace's key cannot use it.
    await createWorkspace(g.admin, 'Team B', 'team-b');
    const other = await createWorkspaceKey(g.admin, { workspace_id: 'team-b', scopes: ['completions.write'] });
    const denied = await apiClient(g.baseUrl, other.key).post('/v1/chat/completions', chat, {
      'x-service-virtual-key': vk.body.slug,
    });
    expect([403, 404]).toContain(denied.status);
    expect(g.mock.requests).toHaveLength(1);
  });

  it('says which header to send when the provider is missing or unknown, and names both sides of an unsupported endpoint', async () => {
    const g = await startGateway();
    const missing = await g.admin.post('/v1/chat/completions', chat);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'MISSING_PROVIDER', param: 'x-service-provider' });
    expect(missing.body.error.message).toMatch(/x-service-provider/);
    expect(missing.body.error.message).toMatch(/x-service-virtual-key/);

    const unknown = await g.admin.post('/v1/chat/completions', chat, {
      'x-service-provider': 'openia',
      authorization: 'Bearer k',
    });
    expect(unknown.body.error).toMatchObject({ code: 'UNKNOWN_PROVIDER' });
    const noKey = await g.admin.post('/v1/chat/completions', chat, { 'x-service-provider': 'openai' });
    expect(noKey.body.error).toMatchObject({ code: 'MISSING_PROVIDER', param: 'authorization' });

    const unsupported = await g.admin.post('/v1/rerank', { query: 'q', documents: ['a'] }, g.viaMock);
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.error.code).toBe('UNSUPPORTED_ENDPOINT');
    expect(unsupported.body.error.message).toMatch(/openai/);
    expect(unsupported.body.error.message).toMatch(/rerank/);
    expect(g.mock.requests).toHaveLength(0);
    // Failures are logged too.
    const logs = await g.logs(4);
    expect(logs.map((l: any) => l.error_code).sort()).toEqual([
      'MISSING_PROVIDER',
      'MISSING_PROVIDER',
      'UNKNOWN_PROVIDER',
      'UNSUPPORTED_ENDPOINT',
    ]);
    expect(logs.every((l: any) => l.status_code === 400 && l.is_success === false)).toBe(true);
  });

  it('needs completions.write, and never accepts a request without a gateway key', async () => {
    const g = await startGateway();
    const noScope = await createWorkspaceKey(g.admin, { workspace_id: 'default', scopes: ['logs.list'] });
    const res = await apiClient(g.baseUrl, noScope.key).post('/v1/chat/completions', chat, g.viaMock);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('MISSING_SCOPE');
    expect((await apiClient(g.baseUrl).post('/v1/chat/completions', chat, g.viaMock)).status).toBe(401);
    expect((await apiClient(g.baseUrl).get('/v1/anything/else', g.viaMock)).status).toBe(401);
    expect(g.mock.requests).toHaveLength(0);
  });
});
