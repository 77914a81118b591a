import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { estimateRequest } from '../../src/limits/estimate.js';
import { startGateway } from '../helpers/gateway.js';

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(32) }], max_tokens: 5 };

// A token budget that holds one request's reservation (its prompt and max_tokens), not two.
const reserved = await estimateRequest({
  endpointType: 'chatComplete',
  method: 'POST',
  body: chat,
  bodyBytes: 0,
  model: 'gpt-4o',
  price: null,
  maxOutputTokens: null,
});
const ONE_REQUEST = reserved.tokens + 1;

type Gateway = Awaited<ReturnType<typeof startGateway>>;

/** One chat request sent with a stored credential, as a client sends it. */
const send = (g: Gateway, headers: Record<string, string>) => g.admin.post('/v1/chat/completions', chat, headers);

async function mockProvider(g: Gateway, extra: Record<string, unknown> = {}) {
  const integration = await g.admin.post('/v1/integrations', {
    name: 'Mock',
    slug: 'mock',
    ai_provider_id: 'openai',
    key: 'sk-mock',
    configurations: { custom_host: g.mock.baseUrl },
    create_default_provider: false,
  });
  expect(integration.status).toBe(200);
  const provider = await g.admin.post('/v1/providers', {
    name: 'Limited',
    slug: 'limited',
    integration_id: 'mock',
    ...extra,
  });
  return provider;
}

describe('limits of providers and virtual keys', () => {
  it('a provider rate limit sent as one object is stored as an array and answers 429 with the usual headers', async () => {
    const g = await startGateway();
    const created = await mockProvider(g, { rate_limits: { type: 'requests', unit: 'rpm', value: 2 } });
    expect(created.status).toBe(200);
    const got = await g.admin.get('/v1/providers/limited');
    expect(got.body).toMatchObject({
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 2 }],
      usage_limits: null,
      expires_at: null,
      reset_usage: null,
      status: 'active',
    });
    expect((await send(g, { 'x-service-provider': '@limited' })).status).toBe(200);
    expect((await send(g, { 'x-service-provider': '@limited' })).status).toBe(200);
    const refused = await send(g, { 'x-service-provider': '@limited' });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(refused.body.error.message).toContain('provider @limited');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('2');
    expect(g.mock.requests).toHaveLength(2);
  });

  it('an expired provider is refused until a later expires_at brings it back', async () => {
    const clock = createManualClock();
    const g = await startGateway({ clock });
    const inAnHour = new Date(clock.now() + 3600_000).toISOString();
    expect((await mockProvider(g, { expires_at: inAnHour })).status).toBe(200);
    expect((await send(g, { 'x-service-provider': '@limited' })).status).toBe(200);

    clock.advance(2 * 3600_000);
    const refused = await send(g, { 'x-service-provider': '@limited' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('CREDENTIAL_EXPIRED');
    expect((await g.admin.get('/v1/providers/limited')).body.status).toBe('expired');

    const later = new Date(clock.now() + 3600_000).toISOString();
    expect((await g.admin.put('/v1/providers/limited', { expires_at: later })).status).toBe(200);
    expect((await send(g, { 'x-service-provider': '@limited' })).status).toBe(200);
    expect(g.mock.requests).toHaveLength(2);
  });

  it('a virtual key budget refuses once spent, and reset_usage starts a new period', async () => {
    const g = await startGateway({ mock: { tokenizerUsage: true } });
    const created = await g.admin.post('/v1/virtual-keys', {
      name: 'Budgeted',
      slug: 'budgeted',
      provider: 'openai',
      key: 'sk-vk',
      configurations: { custom_host: g.mock.baseUrl },
      usage_limits: { credit_limit: ONE_REQUEST, type: 'tokens' },
    });
    expect(created.status).toBe(200);
    // svcgw's fields and the reference's wrapper, side by side.
    expect(created.body).toMatchObject({ slug: 'budgeted', success: true, data: { slug: 'budgeted' } });
    const vk = { 'x-service-virtual-key': 'budgeted' };
    expect((await send(g, vk)).status).toBe(200);
    await g.logs(1);
    const spent = await send(g, vk);
    expect(spent.status).toBe(402);
    expect(spent.body.error.message).toContain('virtual key budgeted');

    const reset = await g.admin.put('/v1/virtual-keys/budgeted', { reset_usage: true });
    expect(reset.status).toBe(200);
    const got = await g.admin.get('/v1/virtual-keys/budgeted');
    expect(got.body.last_reset_at).toEqual(expect.any(String));
    expect(got.body.usage_limits).toMatchObject({
      credit_limit: ONE_REQUEST,
      type: 'tokens',
      last_reset_at: got.body.last_reset_at,
    });
    expect((await send(g, vk)).status).toBe(200);
  });

  it("maps a virtual key's camelCase provider fields onto configurations, where the gateway reads them", async () => {
    const g = await startGateway({ routeAllHostsToMock: true });
    const created = await g.admin.post('/v1/virtual-keys', {
      name: 'Azure',
      slug: 'azure',
      provider: 'azure-openai',
      key: 'azure-key',
      resourceName: 'myres',
      deploymentName: 'gpt4o-prod',
      apiVersion: '2024-10-21',
    });
    expect(created.status).toBe(200);
    const got = await g.admin.get('/v1/virtual-keys/azure');
    const settings = {
      azure_resource_name: 'myres',
      azure_deployment_name: 'gpt4o-prod',
      azure_api_version: '2024-10-21',
    };
    expect(got.body.configurations).toEqual(settings);
    expect(got.body.model_config).toEqual(settings);
    expect((await send(g, { 'x-service-virtual-key': 'azure' })).status).toBe(200);
    const upstream = g.mock.requests[0]!;
    expect(upstream.headers.host).toBe('myres.openai.azure.com');
    expect(upstream.url).toBe('/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
  });

  it('refuses bad values with the field in param', async () => {
    const g = await startGateway();
    const past = await mockProvider(g, { expires_at: '2000-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(past.body.error.param).toBe('expires_at');
    const unit = await g.admin.post('/v1/providers', {
      name: 'Bad',
      integration_id: 'mock',
      rate_limits: [{ type: 'requests', unit: 'per-minute', value: 1 }],
    });
    expect(unit.status).toBe(400);
    expect(unit.body.error.param).toMatch(/^rate_limits/);
    const budget = await g.admin.post('/v1/virtual-keys', {
      name: 'Bad',
      provider: 'openai',
      key: 'sk-x',
      usage_limits: { credit_limit: 10, alert_threshold: 20 },
    });
    expect(budget.status).toBe(400);
    expect(budget.body.error.param).toBe('usage_limits.alert_threshold');
    const camel = await g.admin.post('/v1/virtual-keys', {
      name: 'Bad azure',
      provider: 'azure-openai',
      key: 'k',
      resourceName: 'not a name!',
    });
    expect(camel.status).toBe(400);
    expect(camel.body.error.param).toBe('resourceName');
  });
});
