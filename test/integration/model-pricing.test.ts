import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';
import { referencePrice, startFakeProxy } from '../helpers/fake-pricing-proxy.js';

async function proxyWith(answers: Parameters<typeof startFakeProxy>[0]) {
  const proxy = await startFakeProxy(answers);
  onTestFinished(() => proxy.close());
  return { proxy, env: { MODEL_CONFIGS_PROXY_FETCH_ENABLED: 'ON', MODEL_CONFIGS_PROXY_URL: proxy.url } };
}

describe('GET /v1/model-configs/pricing/:provider/:model', () => {
  it('shows the price that applies, its source and the per-1M figures, without authentication', async () => {
    const { env } = await proxyWith({
      '/pricing/openai': { status: 200, body: { 'gpt-4o': referencePrice(0.0003, 0.0012, 0.00015) } },
    });
    const t = await startTestServer({ env });
    const anonymous = apiClient(t.baseUrl);

    const fromProxy = await anonymous.get('/v1/model-configs/pricing/openai/gpt-4o');
    expect(fromProxy.status).toBe(200);
    expect(fromProxy.body).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      priced_as: 'gpt-4o',
      source: 'proxy',
      pay_as_you_go: {
        request_token: { price: 0.0003 },
        response_token: { price: 0.0012 },
        cache_read_input_token: { price: 0.00015 },
      },
      currency: 'USD',
      per_million_tokens: { input: 3, output: 12, cached_input: 1.5, long_prompt: null },
      object: 'model-pricing',
    });

    // Not in the proxy's document: the shipped defaults answer, dated ids as their undated entry.
    const shipped = await anonymous.get('/v1/model-configs/pricing/openai/gpt-4o-mini-2024-07-18');
    expect(shipped.status).toBe(200);
    expect(shipped.body).toMatchObject({
      source: 'local',
      priced_as: 'gpt-4o-mini',
      pay_as_you_go: { request_token: { price: 0.000015 }, response_token: { price: 0.00006 } },
    });
    expect(shipped.body.per_million_tokens).toMatchObject({ input: 0.15, output: 0.6 });
  });

  it('answers 404 with the common error body for a model no source prices', async () => {
    const t = await startTestServer();
    const res = await apiClient(t.baseUrl).get('/v1/model-configs/pricing/openai/gpt-no-such-model');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: {
        message: expect.stringMatching(/gpt-no-such-model/),
        type: 'not_found_error',
        param: 'model',
        code: 'NOT_FOUND',
      },
    });
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('refuses a provider id that is not one, and takes a model id with a slash URL-encoded', async () => {
    const { env } = await proxyWith({
      '/pricing/groq': {
        status: 200,
        body: { 'meta-llama/llama-4-scout-17b-16e-instruct': referencePrice(0.000011, 0.000034) },
      },
    });
    const t = await startTestServer({ env });
    const anonymous = apiClient(t.baseUrl);
    const bad = await anonymous.get('/v1/model-configs/pricing/Not%20A%20Provider/gpt-4o');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'provider' });
    const slash = await anonymous.get(
      `/v1/model-configs/pricing/groq/${encodeURIComponent('meta-llama/llama-4-scout-17b-16e-instruct')}`,
    );
    expect(slash.status).toBe(200);
    expect(slash.body).toMatchObject({
      model: 'meta-llama/llama-4-scout-17b-16e-instruct',
      source: 'proxy',
      per_million_tokens: { input: 0.11, output: 0.34 },
    });
  });

  it('falls back to the local files when the proxy is down', async () => {
    const { proxy, env } = await proxyWith({});
    await proxy.close();
    const t = await startTestServer({ env });
    const res = await apiClient(t.baseUrl).get('/v1/model-configs/pricing/openai/gpt-4o');
    expect(res.status).toBe(200);
    expect(res.body.source).toBe('local');
    expect(t.logLines.some((line) => line.includes('model-configs proxy failed'))).toBe(true);
  });
});

describe('cost of gateway requests', () => {
  it("logs the proxy's price as the cost, and null (unknown) for a model without a price", async () => {
    const { proxy, env } = await proxyWith({
      '/pricing/openai': {
        status: 200,
        body: { 'gpt-4o': referencePrice(0.0003, 0.0012), 'gpt-4.1': referencePrice(0.0002, 0.0008) },
      },
    });
    const g = await startGateway({ env });
    const client = g.openai();

    const priced = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    const [first] = await g.logs(1);
    // $3 / $12 per 1M tokens from the proxy (the shipped file says $2.50 / $10).
    expect(first.cost).toBeCloseTo((priced.usage!.prompt_tokens * 3 + priced.usage!.completion_tokens * 12) / 1e6, 15);
    expect(first.cost_currency).toBe('USD');

    const unknown = await client.chat.completions.create({
      model: 'gpt-unpriced-model',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(unknown.usage!.prompt_tokens).toBeGreaterThan(0);
    const logs = await g.logs(2);
    const unpriced = logs.find((log) => log.model === 'gpt-unpriced-model');
    expect(unpriced).toMatchObject({ status_code: 200, prompt_tokens: unknown.usage!.prompt_tokens });
    expect(unpriced.cost).toBeNull();

    // Both models came from one fetch of the provider's document.
    expect(proxy.hits.filter((hit) => hit === '/pricing/openai')).toHaveLength(1);
  });
});
