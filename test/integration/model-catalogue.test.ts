import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { GatewayHarness } from '../helpers/gateway.js';
import { expectRefused, startTenantPair, type Tenant } from '../helpers/tenant-pair.js';

const ask = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'hello there' }] });

/** The official client as a tool configures it: a base URL and a key, nothing else. */
const dropIn = (g: GatewayHarness, key: string) =>
  new OpenAI({ baseURL: `${g.baseUrl}/v1`, apiKey: key, maxRetries: 0 });

type Refusal = { status: number; error: { code: string; param: string | null; message: string } };
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e as Refusal,
  );

/** An integration whose default provider `slug` lives in the tenant's workspace and calls the mock with `key`. */
async function storeProvider(g: GatewayHarness, tenant: Tenant, slug: string, key = `sk-${slug}`) {
  const res = await g.admin.post('/v1/integrations', {
    name: `${slug} integration`,
    slug: `${slug}-${tenant.slug}`,
    ai_provider_id: 'openai',
    key,
    configurations: { custom_host: g.mock.baseUrl },
    workspace_id: tenant.slug,
    default_provider_slug: slug,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; slug: string };
}

const upstreamModel = (g: GatewayHarness, i: number) =>
  (JSON.parse(g.mock.requests[i]!.body.toString('utf8')) as { model: string }).model;

describe('integration model lists', () => {
  it('GET/PUT/DELETE /v1/integrations/{slug}/models keep the list, audited; bad input names the field', async () => {
    const { g, a } = await startTenantPair();
    const integration = await storeProvider(g, a, 'main');
    const path = `/v1/integrations/${integration.slug}/models`;

    expect((await g.admin.get(path)).body).toEqual({ total: 0, allow_all_models: true, models: [] });
    const put = await g.admin.put(path, {
      allow_all_models: false,
      models: [
        { slug: 'gpt-4o-mini', enabled: true },
        { slug: 'gpt-4o', enabled: false },
        {
          slug: 'ft:gpt-4o-mini:acme:support',
          enabled: true,
          is_finetune: true,
          base_model_slug: 'gpt-4o-mini',
          pricing_config: { type: 'static', pay_as_you_go: { request_token: { price: 0.0003 } } },
        },
      ],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const listed = (await g.admin.get(path)).body;
    expect(listed).toMatchObject({ total: 3, allow_all_models: false });
    expect(listed.models.map((m: { slug: string; enabled: boolean }) => [m.slug, m.enabled])).toEqual([
      ['ft:gpt-4o-mini:acme:support', true],
      ['gpt-4o', false],
      ['gpt-4o-mini', true],
    ]);
    expect(listed.models[0]).toMatchObject({ is_finetune: true, base_model_slug: 'gpt-4o-mini', is_custom: false });
    expect((await g.admin.get(`/v1/integrations/${integration.slug}`)).body.allow_all_models).toBe(false);

    // A second PUT changes the models it names and leaves the others.
    await g.admin.put(path, { models: [{ slug: 'gpt-4o', enabled: true }] });
    const after = (await g.admin.get(path)).body.models as Array<{ slug: string; enabled: boolean }>;
    expect(after.find((m) => m.slug === 'gpt-4o')!.enabled).toBe(true);
    expect(after).toHaveLength(3);

    expect((await g.admin.delete(`${path}?slugs=gpt-4o,ft:gpt-4o-mini:acme:support`)).status).toBe(200);
    expect((await g.admin.get(path)).body.models.map((m: { slug: string }) => m.slug)).toEqual(['gpt-4o-mini']);

    expectRefused(
      await g.admin.put(path, {
        models: [
          { slug: 'x', enabled: true },
          { slug: 'x', enabled: false },
        ],
      }),
      400,
      'INVALID_REQUEST',
      'models[1].slug',
    );
    expectRefused(await g.admin.put(path, { models: [{ slug: 'bad model', enabled: true }] }), 400, 'INVALID_REQUEST');
    expectRefused(
      await g.admin.put(path, { models: [{ slug: 'ft:x', enabled: true, is_finetune: true }] }),
      400,
      'INVALID_REQUEST',
      'models[0].base_model_slug',
    );
    expectRefused(await g.admin.put(path, { models: [{ slug: 'x' }] }), 400, 'INVALID_REQUEST');
    expectRefused(await g.admin.put(path, { models: [], surprise: 1 }), 400, 'INVALID_REQUEST');
    expectRefused(await g.admin.put(path, {}), 400, 'INVALID_REQUEST');
    expectRefused(await g.admin.delete(`${path}?slugs=never-listed`), 404, 'NOT_FOUND', 'slugs');
    expectRefused(await g.admin.delete(path), 400, 'INVALID_REQUEST');
    expectRefused(await g.admin.get('/v1/integrations/nope/models'), 404, 'NOT_FOUND');

    // Integrations are the organisation's: a workspace key reads and changes none of them.
    expectRefused(await a.client.get(path), 403, 'KEY_TYPE_NOT_ALLOWED');
    expectRefused(await a.client.put(path, { allow_all_models: true }), 403, 'KEY_TYPE_NOT_ALLOWED');

    const audit = (await g.admin.get('/v1/audit-logs?resource_type=integration')).body.data as Array<{
      action: string;
      resource_id: string;
    }>;
    const actions = audit.filter((r) => r.resource_id === integration.id).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(['update_models', 'delete_models']));
  });

  it('a model the list does not allow is refused before any provider call, however the provider is named', async () => {
    const { g, a } = await startTenantPair();
    const integration = await storeProvider(g, a, 'strict');
    await g.admin.put(`/v1/integrations/${integration.slug}/models`, {
      allow_all_models: false,
      models: [{ slug: 'gpt-4o-mini', enabled: true }],
    });

    const byModel = await refusal(dropIn(g, a.key).chat.completions.create(ask('@strict/gpt-4o')));
    expect(byModel).toMatchObject({ status: 403, error: { code: 'MODEL_NOT_ALLOWED', param: 'model' } });
    expect(byModel.error.message).toContain('@strict');

    const headers = { 'x-service-api-key': a.key, 'content-type': 'application/json' };
    const byHeader = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'x-service-provider': '@strict' },
      body: JSON.stringify(ask('gpt-4o')),
    });
    expect(byHeader.status).toBe(403);
    const byConfig = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        ...headers,
        'x-service-config': JSON.stringify({ provider: '@strict', override_params: { model: 'gpt-4.1' } }),
      },
      body: JSON.stringify(ask('gpt-4o-mini')),
    });
    expect(((await byConfig.json()) as Refusal).error).toMatchObject({ code: 'MODEL_NOT_ALLOWED', param: 'model' });
    // A body that streams through is not read first: a restricted list refuses it too.
    const raw = await fetch(`${g.baseUrl}/v1/some/native/route`, {
      method: 'POST',
      headers: { ...headers, 'x-service-provider': '@strict' },
      body: JSON.stringify(ask('gpt-4o-mini')),
    });
    expect(raw.status).toBe(403);
    expect(g.mock.requests).toHaveLength(0);

    // The enabled model goes through; a disabled entry under allow_all_models is refused too.
    await dropIn(g, a.key).chat.completions.create(ask('@strict/gpt-4o-mini'));
    expect(g.mock.requests).toHaveLength(1);
    await g.admin.put(`/v1/integrations/${integration.slug}/models`, {
      allow_all_models: true,
      models: [{ slug: 'gpt-4o-mini', enabled: false }],
    });
    await dropIn(g, a.key).chat.completions.create(ask('@strict/gpt-4o'));
    expect(await refusal(dropIn(g, a.key).chat.completions.create(ask('@strict/gpt-4o-mini')))).toMatchObject({
      status: 403,
      error: { code: 'MODEL_NOT_ALLOWED' },
    });
    expect(g.mock.requests).toHaveLength(2);

    const [log] = await g.logs(1, `workspace_id=${a.id}&status_code=403`);
    expect(log).toMatchObject({ error_code: 'MODEL_NOT_ALLOWED' });
  });

  it('@unknown/model is a 404 that names model', async () => {
    const { g, a } = await startTenantPair();
    const unknown = await refusal(dropIn(g, a.key).chat.completions.create(ask('@unknown/gpt-4o')));
    expect(unknown).toMatchObject({ status: 404, error: { code: 'NOT_FOUND', param: 'model' } });
    expect(g.mock.requests).toHaveLength(0);
  });
});

describe('models a key or a workspace may use', () => {
  it('GET /v1/models lists per key what it may reach; the limits are enforced with the same rules', async () => {
    const { g, a, b } = await startTenantPair();
    const main = await storeProvider(g, a, 'main');
    await storeProvider(g, b, 'other');
    await g.admin.put(`/v1/integrations/${main.slug}/models`, {
      models: [
        { slug: 'gpt-4o', enabled: false },
        { slug: 'my-custom-model', enabled: true, is_custom: true },
      ],
    });
    const ids = async (key: string) => (await dropIn(g, key).models.list()).data.map((m) => m.id);

    const all = await ids(a.key);
    expect(all).toContain('@main/gpt-4o-mini');
    expect(all).toContain('@main/my-custom-model');
    expect(all).not.toContain('@main/gpt-4o'); // disabled in the integration's list
    expect(all.every((id) => id.startsWith('@main/'))).toBe(true);

    const limited = await g.admin.post('/v1/api-keys/workspace/service', {
      name: 'limited',
      workspace_id: a.slug,
      scopes: ['completions.write'],
      defaults: { allowed_models: ['@main/gpt-4o-mini', 'my-custom*'] },
    });
    expect(limited.status, JSON.stringify(limited.body)).toBe(200);
    expect((await g.admin.get(`/v1/api-keys/${limited.body.id}`)).body.defaults.allowed_models).toEqual([
      '@main/gpt-4o-mini',
      'my-custom*',
    ]);
    expect((await ids(limited.body.key)).sort()).toEqual(['@main/gpt-4o-mini', '@main/my-custom-model']);
    await dropIn(g, limited.body.key).chat.completions.create(ask('@main/gpt-4o-mini'));
    const refusedByKey = await refusal(dropIn(g, limited.body.key).chat.completions.create(ask('@main/gpt-4.1')));
    expect(refusedByKey).toMatchObject({ status: 403, error: { code: 'MODEL_NOT_ALLOWED', param: 'model' } });
    expect(refusedByKey.error.message).toContain('API key');

    // The workspace's limit applies to every key of it, on top of the key's own.
    const ws = await g.admin.put(`/v1/workspaces/${a.slug}`, { defaults: { allowed_models: ['gpt-4o-mini'] } });
    expect(ws.status, JSON.stringify(ws.body)).toBe(200);
    expect((await g.admin.get(`/v1/workspaces/${a.slug}`)).body.defaults).toEqual({
      input_guardrails: [],
      output_guardrails: [],
      allowed_models: ['gpt-4o-mini'],
      metadata: {},
    });
    expect(await ids(a.key)).toEqual(['@main/gpt-4o-mini']);
    expect(await ids(limited.body.key)).toEqual(['@main/gpt-4o-mini']);
    const refusedByWorkspace = await refusal(dropIn(g, a.key).chat.completions.create(ask('@main/gpt-4.1')));
    expect(refusedByWorkspace.error.message).toContain('workspace');
    // Team B is not limited by team A's workspace.
    expect(await ids(b.key)).toContain('@other/gpt-4.1');
    expect(g.mock.requests).toHaveLength(1);

    expectRefused(
      await g.admin.put(`/v1/workspaces/${a.slug}`, { defaults: { allowed_models: ['gpt-*-mini'] } }),
      400,
      'INVALID_REQUEST',
    );
    expectRefused(
      await g.admin.post('/v1/api-keys/workspace/service', {
        name: 'bad',
        workspace_id: a.slug,
        scopes: ['completions.write'],
        defaults: { allowed_models: 'gpt-4o' },
      }),
      400,
      'INVALID_REQUEST',
    );
    // Lifting the workspace limit restores the list.
    await g.admin.put(`/v1/workspaces/${a.slug}`, { defaults: { allowed_models: null } });
    expect(await ids(a.key)).toContain('@main/gpt-4.1');
  });
});

describe('model aliases', () => {
  it('a plain model name routes through an alias to a fallback config; the log shows the alias and the model served', async () => {
    const { g, a } = await startTenantPair();
    await storeProvider(g, a, 'primary', 'sk-primary');
    await storeProvider(g, a, 'backup', 'sk-backup');
    const config = await a.client.post('/v1/configs', {
      name: 'chat with fallback',
      slug: 'chat-fallback',
      config: {
        strategy: { mode: 'fallback' },
        targets: [
          { provider: '@primary', override_params: { model: 'gpt-4o-mini' } },
          { provider: '@backup', override_params: { model: 'gpt-4o' } },
        ],
      },
    });
    expect(config.status, JSON.stringify(config.body)).toBe(200);
    const alias = await a.client.post('/v1/model-aliases', { name: 'default-chat', config_id: 'chat-fallback' });
    expect(alias.status, JSON.stringify(alias.body)).toBe(200);
    const simple = await a.client.post('/v1/model-aliases', { name: 'fast', model: '@primary/gpt-4o-mini' });
    expect(simple.status, JSON.stringify(simple.body)).toBe(200);

    g.mock.behave({ kind: 'error', status: 503 }, { times: 1 });
    const answer = await dropIn(g, a.key).chat.completions.create(ask('default-chat'));
    expect(answer.choices[0]!.message.content).toBeTruthy();
    expect(g.mock.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-primary', 'Bearer sk-backup']);
    expect([upstreamModel(g, 0), upstreamModel(g, 1)]).toEqual(['gpt-4o-mini', 'gpt-4o']);
    const [log] = await g.logs(1, `workspace_id=${a.id}`);
    expect(log).toMatchObject({ requested_model: 'default-chat', model: 'gpt-4o', status_code: 200 });

    await dropIn(g, a.key).chat.completions.create(ask('fast'));
    expect(g.mock.requests[2]!.headers.authorization).toBe('Bearer sk-primary');
    expect(upstreamModel(g, 2)).toBe('gpt-4o-mini');

    // Aliases are listed with the models; a key limited to the alias may use it, and nothing else.
    const listed = (await dropIn(g, a.key).models.list()).data;
    expect(listed.find((m) => m.id === 'default-chat')).toMatchObject({ object: 'model', owned_by: 'svcgw-alias' });
    const onlyAlias = await g.admin.post('/v1/api-keys/workspace/service', {
      name: 'alias only',
      workspace_id: a.slug,
      scopes: ['completions.write'],
      defaults: { allowed_models: ['default-chat'] },
    });
    expect((await dropIn(g, onlyAlias.body.key).models.list()).data.map((m) => m.id)).toEqual(['default-chat']);
    await dropIn(g, onlyAlias.body.key).chat.completions.create(ask('default-chat'));
    expect(
      await refusal(dropIn(g, onlyAlias.body.key).chat.completions.create(ask('@primary/gpt-4o-mini'))),
    ).toMatchObject({ status: 403, error: { code: 'MODEL_NOT_ALLOWED' } });
  });

  it('aliases are tenant-walled: they name only what their owner reaches, and are seen only there', async () => {
    const { g, a, b } = await startTenantPair();
    await storeProvider(g, a, 'a-openai');
    await storeProvider(g, b, 'b-openai');
    const bConfig = await b.client.post('/v1/configs', {
      name: 'b config',
      slug: 'b-config',
      config: { provider: '@b-openai', override_params: { model: 'gpt-4o' } },
    });
    expect(bConfig.status).toBe(200);

    expectRefused(
      await a.client.post('/v1/model-aliases', { name: 'steal', model: '@b-openai/gpt-4o' }),
      404,
      'NOT_FOUND',
      'model',
    );
    expectRefused(
      await a.client.post('/v1/model-aliases', { name: 'steal', config_id: 'b-config' }),
      403,
      'WORKSPACE_FORBIDDEN',
      'config_id',
    );
    expectRefused(
      await a.client.post('/v1/model-aliases', { name: 'x', model: '@a-openai/gpt-4o', workspace_id: b.slug }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
    expectRefused(
      await a.client.post('/v1/model-aliases', { name: 'org', model: '@a-openai/gpt-4o', workspace_id: null }),
      403,
      'WORKSPACE_FORBIDDEN',
      'workspace_id',
    );
    expectRefused(
      await a.client.post('/v1/model-aliases', { name: 'both', model: '@a-openai/x', config_id: 'y' }),
      400,
      'INVALID_REQUEST',
    );
    expectRefused(
      await a.client.post('/v1/model-aliases', { name: '@bad', model: '@a-openai/x' }),
      400,
      'INVALID_REQUEST',
    );

    const mine = await a.client.post('/v1/model-aliases', { name: 'team-chat', model: '@a-openai/gpt-4o-mini' });
    expect(mine.status).toBe(200);
    expectRefused(
      await a.client.post('/v1/model-aliases', { name: 'team-chat', model: '@a-openai/gpt-4o' }),
      409,
      'CONFLICT',
      'name',
    );
    expectRefused(await b.client.get('/v1/model-aliases/team-chat'), 404, 'NOT_FOUND');
    expectRefused(await b.client.get(`/v1/model-aliases/${mine.body.id}`), 403, 'WORKSPACE_FORBIDDEN');
    expect((await b.client.get('/v1/model-aliases')).body.total).toBe(0);
    // In team B the name is no alias: the request names no provider.
    const plain = await refusal(dropIn(g, b.key).chat.completions.create(ask('team-chat')));
    expect(plain).toMatchObject({ status: 400, error: { code: 'MISSING_PROVIDER' } });

    // An organisation-wide alias resolves in each workspace to that workspace's own provider.
    await g.admin.post('/v1/integrations', {
      name: 'shared b',
      slug: 'shared-b',
      ai_provider_id: 'openai',
      key: 'sk-shared-in-b',
      configurations: { custom_host: g.mock.baseUrl },
      workspace_id: b.slug,
      default_provider_slug: 'shared',
    });
    await g.admin.post('/v1/integrations', {
      name: 'shared a',
      slug: 'shared-a',
      ai_provider_id: 'openai',
      key: 'sk-shared-in-a',
      configurations: { custom_host: g.mock.baseUrl },
      workspace_id: a.slug,
      default_provider_slug: 'shared',
    });
    const org = await g.admin.post('/v1/model-aliases', { name: 'company-chat', model: '@shared/gpt-4o-mini' });
    expect(org.status, JSON.stringify(org.body)).toBe(200);
    expectRefused(
      await g.admin.post('/v1/model-aliases', { name: 'org-config', config_id: 'b-config', workspace_id: null }),
      400,
      'INVALID_REQUEST',
      'config_id',
    );
    await dropIn(g, a.key).chat.completions.create(ask('company-chat'));
    await dropIn(g, b.key).chat.completions.create(ask('company-chat'));
    expect(g.mock.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer sk-shared-in-a',
      'Bearer sk-shared-in-b',
    ]);
    // Seen by both, changed only by organisation admins.
    expect((await b.client.get('/v1/model-aliases/company-chat')).body.model).toBe('@shared/gpt-4o-mini');
    expectRefused(await b.client.delete('/v1/model-aliases/company-chat'), 403, 'WORKSPACE_FORBIDDEN');

    // A workspace alias shadows the organisation's of the same name.
    await a.client.post('/v1/model-aliases', { name: 'company-chat', model: '@a-openai/gpt-4o' });
    await dropIn(g, a.key).chat.completions.create(ask('company-chat'));
    expect(upstreamModel(g, 2)).toBe('gpt-4o');
    expect(g.mock.requests[2]!.headers.authorization).toBe('Bearer sk-a-openai');

    expect((await a.client.delete('/v1/model-aliases/company-chat')).status).toBe(200);
    const audit = (await g.admin.get('/v1/audit-logs?resource_type=model_alias')).body.data as Array<{
      action: string;
      response_status_code: number;
    }>;
    const applied = audit.filter((r) => r.response_status_code === 200).map((r) => r.action);
    expect(applied.sort()).toEqual(['create', 'create', 'create', 'delete']);
    expect(audit.filter((r) => r.response_status_code >= 400).length).toBeGreaterThan(0); // refusals are recorded too
  });
});
