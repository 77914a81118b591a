import OpenAI from 'openai';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startMockAnthropic } from '../helpers/mock-anthropic-upstream.js';
import { startTenantPair, type Tenant } from '../helpers/tenant-pair.js';
import type { GatewayHarness } from '../helpers/gateway.js';

const ask = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'hello there' }] });

/** The official client as a tool configures it: a base URL and a key, nothing else. */
const dropIn = (g: GatewayHarness, key: string) =>
  new OpenAI({ baseURL: `${g.baseUrl}/v1`, apiKey: key, maxRetries: 0 });

/** An integration with its default provider in the tenant's workspace, calling the mock with `key`. */
async function storeProvider(g: GatewayHarness, tenant: Tenant, slug: string, key: string, extra = {}) {
  const res = await g.admin.post('/v1/integrations', {
    name: `${slug} integration`,
    slug: `${slug}-${tenant.slug}`,
    ai_provider_id: 'openai',
    key,
    configurations: { custom_host: g.mock.baseUrl },
    workspace_id: tenant.slug,
    default_provider_slug: slug,
    ...extra,
  });
  expect(res.status).toBe(200);
  return res.body;
}

describe('drop-in: an svcgw key as the bearer token, the provider in the model name', () => {
  it('the openai client with only baseURL and apiKey reaches the stored provider through @slug/model', async () => {
    const { g, a } = await startTenantPair();
    await storeProvider(g, a, 'my-openai', 'sk-stored-for-team-a');

    const completion = await dropIn(g, a.key).chat.completions.create(ask('@my-openai/gpt-4o-mini'));
    expect(completion.choices[0]!.message.content).toBeTruthy();

    const upstream = g.mock.requests[0]!;
    expect(upstream.headers.authorization).toBe('Bearer sk-stored-for-team-a');
    expect(JSON.parse(upstream.body.toString('utf8')).model).toBe('gpt-4o-mini');
    const everything = JSON.stringify(g.mock.requests.map((r) => ({ h: r.headers, b: r.body.toString('utf8') })));
    expect(everything).not.toContain(a.key);

    const [log] = await g.logs(1, `workspace_id=${a.id}`);
    expect(log).toMatchObject({ credential_source: 'provider:my-openai', model: 'gpt-4o-mini', status_code: 200 });

    // A stream goes the same way.
    const stream = await dropIn(g, a.key).chat.completions.create({ ...ask('@my-openai/gpt-4o'), stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text.length).toBeGreaterThan(0);
    expect(JSON.parse(g.mock.requests[1]!.body.toString('utf8')).model).toBe('gpt-4o');
  });

  it('a provider slug of another workspace is not found; a plain model without a provider says what to send', async () => {
    const { g, a, b } = await startTenantPair();
    await storeProvider(g, a, 'team-a-openai', 'sk-a');
    const other = await dropIn(g, b.key)
      .chat.completions.create(ask('@team-a-openai/gpt-4o-mini'))
      .catch((e: unknown) => e as { status: number; error: { code: string } });
    expect(other).toMatchObject({ status: 404 });
    const plain = await dropIn(g, b.key)
      .chat.completions.create(ask('gpt-4o-mini'))
      .catch((e: unknown) => e as { status: number; error: { code: string; message: string } });
    expect(plain).toMatchObject({ status: 400, error: { code: 'MISSING_PROVIDER' } });
    expect(g.mock.requests).toHaveLength(0);
  });

  it('a wrong svcgw key in Authorization is refused and never reaches a provider', async () => {
    const { g } = await startTenantPair();
    const refused = await dropIn(g, 'svc-' + 'x'.repeat(43))
      .chat.completions.create(ask('@my-openai/gpt-4o-mini'))
      .catch((e: unknown) => e as { status: number; error: { code: string } });
    expect(refused).toMatchObject({ status: 401, error: { code: 'INVALID_API_KEY' } });
    const providerKeyOnly = await dropIn(g, 'sk-provider-key')
      .chat.completions.create(ask('gpt-4o-mini'))
      .catch((e: unknown) => e as { status: number; error: { code: string } });
    expect(providerKeyOnly).toMatchObject({ status: 401, error: { code: 'UNAUTHENTICATED' } });
    expect(g.mock.requests).toHaveLength(0);
  });

  it('a provider key in Authorization with x-service-api-key works as before', async () => {
    const { g, a } = await startTenantPair();
    const client = new OpenAI({
      baseURL: `${g.baseUrl}/v1`,
      apiKey: 'sk-client-provider-key',
      maxRetries: 0,
      defaultHeaders: {
        'x-service-api-key': a.key,
        'x-service-provider': 'openai',
        'x-service-custom-host': g.mock.baseUrl,
      },
    });
    await client.chat.completions.create(ask('gpt-4o-mini'));
    expect(g.mock.requests[0]!.headers.authorization).toBe('Bearer sk-client-provider-key');
    // With x-service-api-key, even an svc- bearer is the provider's key (one svcgw in front of another).
    const chained = new OpenAI({
      baseURL: `${g.baseUrl}/v1`,
      apiKey: 'svc-key-of-the-next-gateway',
      maxRetries: 0,
      defaultHeaders: {
        'x-service-api-key': a.key,
        'x-service-provider': 'openai',
        'x-service-custom-host': g.mock.baseUrl,
      },
    });
    await chained.chat.completions.create(ask('gpt-4o-mini'));
    expect(g.mock.requests[1]!.headers.authorization).toBe('Bearer svc-key-of-the-next-gateway');
  });

  it("the key's default config routes a plain model name; an @slug/model wins over it", async () => {
    const { g, a } = await startTenantPair();
    await storeProvider(g, a, 'via-config', 'sk-config-provider');
    await storeProvider(g, a, 'via-model', 'sk-model-provider');
    const config = await a.client.post('/v1/configs', {
      name: 'default chat',
      config: { provider: '@via-config' },
    });
    expect(config.status).toBe(200);
    const key = await g.admin.post('/v1/api-keys/workspace/service', {
      name: 'tool key',
      workspace_id: a.slug,
      scopes: ['completions.write'],
      defaults: { config_id: config.body.id },
    });
    expect(key.status).toBe(200);

    await dropIn(g, key.body.key).chat.completions.create(ask('gpt-4o-mini'));
    expect(g.mock.requests[0]!.headers.authorization).toBe('Bearer sk-config-provider');
    await dropIn(g, key.body.key).chat.completions.create(ask('@via-model/gpt-4o-mini'));
    expect(g.mock.requests[1]!.headers.authorization).toBe('Bearer sk-model-provider');
  });

  it('GET /v1/models lists, per key, the @slug/model ids of its own workspace only', async () => {
    const { g, a, b } = await startTenantPair();
    await storeProvider(g, a, 'a-openai', 'sk-a');
    await storeProvider(g, b, 'b-openai', 'sk-b');
    const archived = await storeProvider(g, b, 'b-old', 'sk-old');
    expect((await g.admin.delete(`/v1/integrations/${archived.slug}`)).status).toBe(200);

    const seenByA = await dropIn(g, a.key).models.list();
    const idsA = seenByA.data.map((m) => m.id);
    expect(idsA).toContain('@a-openai/gpt-4o-mini');
    expect(idsA.every((id) => id.startsWith('@a-openai/'))).toBe(true);
    expect(seenByA.data[0]).toMatchObject({ object: 'model', owned_by: 'openai' });
    expect(seenByA.data[0]!.created).toBeGreaterThan(0);

    const idsB = (await dropIn(g, b.key).models.list()).data.map((m) => m.id);
    expect(idsB).toContain('@b-openai/gpt-4o-mini');
    expect(idsB.every((id) => id.startsWith('@b-openai/'))).toBe(true); // not team A's, not the archived one
    expect(g.mock.requests).toHaveLength(0);

    // Every listed id is one the gateway routes.
    await dropIn(g, b.key).chat.completions.create(ask(idsB[0]!));
    expect(g.mock.requests[0]!.headers.authorization).toBe('Bearer sk-b');
  });

  it("GET /v1/models with an Anthropic provider header forwards to Anthropic's own list", async () => {
    const { g, a } = await startTenantPair();
    const anthropic = await startMockAnthropic({ apiKey: 'sk-ant-stored' });
    onTestFinished(() => anthropic.close());
    const res = await g.admin.post('/v1/integrations', {
      name: 'Claude',
      slug: 'claude',
      ai_provider_id: 'anthropic',
      key: 'sk-ant-stored',
      configurations: { custom_host: anthropic.url },
      workspace_id: a.slug,
    });
    expect(res.status).toBe(200);

    // As the Anthropic SDK sends it: its native path, anthropic-version, the provider chosen by header.
    const listed = await fetch(`${g.baseUrl}/v1/models`, {
      headers: { authorization: `Bearer ${a.key}`, 'x-service-provider': '@claude', 'anthropic-version': '2023-06-01' },
    });
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { data: Array<{ id: string }> };
    expect(body.data.map((m) => m.id)).toEqual(['claude-mock-1']);
    const upstream = anthropic.requests.at(-1)!;
    expect(upstream.headers['x-api-key']).toBe('sk-ant-stored');
    expect(JSON.stringify(upstream.headers)).not.toContain(a.key);

    // Without a header, the same provider shows in the key's own list.
    const ids = (await dropIn(g, a.key).models.list()).data.map((m) => m.id);
    expect(ids.some((id) => id.startsWith('@claude/claude-'))).toBe(true);
  });
});
