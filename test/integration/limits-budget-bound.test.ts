import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { budgetBody, type BudgetBodyKind } from '../helpers/budget-bodies.js';
import { spawnServe } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient, type ApiClient, type JsonResponse } from '../helpers/http.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import { REDIS_URL, redisAvailable } from '../helpers/services.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const hasRedis = await redisAvailable();

/** Tokens the provider reported for the admitted requests: what the budget must settle to. */
const reported = (results: JsonResponse[]) =>
  results.filter((r) => r.status === 200).reduce((sum, r) => sum + (r.body.usage.total_tokens as number), 0);

async function budgetedKey(admin: ApiClient, baseUrl: string, usageLimits: Record<string, unknown>) {
  const created = await admin.post('/v1/api-keys/workspace/service', {
    name: `budget ${randomUUID()}`,
    workspace_id: 'default',
    scopes: ['completions.write'],
    usage_limits: usageLimits,
  });
  expect(created.status).toBe(200);
  return {
    id: created.body.id as string,
    key: created.body.key as string,
    client: apiClient(baseUrl, created.body.key),
  };
}

/** The key's settled usage once it equals `expected` (usage is written in batches), or what it last was. */
async function settledUsage(admin: ApiClient, keyId: string, expected: number): Promise<number> {
  let usage = NaN;
  for (let attempt = 0; attempt < 100; attempt++) {
    usage = (await admin.get(`/v1/api-keys/${keyId}`)).body.usage_limits.current_usage;
    if (Math.abs(usage - expected) < 1e-12) return usage;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return usage;
}

describe('budgets hold under concurrency: the reservation is an upper bound', () => {
  for (const kind of ['english', 'chinese'] as BudgetBodyKind[]) {
    it(`30 concurrent ${kind} requests never take a 1,000-token budget past its limit`, async () => {
      const g = await startGateway({ mock: { tokenizerUsage: true } });
      const key = await budgetedKey(g.admin, g.baseUrl, { credit_limit: 1000, type: 'tokens' });
      const results = await Promise.all(
        Array.from({ length: 30 }, () => key.client.post('/v1/chat/completions', budgetBody(kind), g.viaMock)),
      );
      const admitted = results.filter((r) => r.status === 200).length;
      expect(admitted).toBeGreaterThan(0);
      expect(admitted + results.filter((r) => r.status === 402).length).toBe(30);
      expect(g.mock.requests).toHaveLength(admitted);
      await g.logs(30);
      await g.server.limits.flush();
      const used = await settledUsage(g.admin, key.id, reported(results));
      expect(used).toBe(reported(results));
      expect(used).toBeLessThanOrEqual(1000);
    });
  }

  it('refuses a 40 KB tools request a 1,000-token budget cannot hold, saying what it needs, and admits it within a larger one', async () => {
    const g = await startGateway({ mock: { tokenizerUsage: true } });
    const small = await budgetedKey(g.admin, g.baseUrl, { credit_limit: 1000, type: 'tokens' });
    const refused = await Promise.all(
      Array.from({ length: 30 }, () => small.client.post('/v1/chat/completions', budgetBody('tools'), g.viaMock)),
    );
    expect(refused.every((r) => r.status === 402)).toBe(true);
    expect(g.mock.requests).toHaveLength(0);
    expect(refused[0]!.body.error).toMatchObject({ code: 'USAGE_LIMIT_EXCEEDED', type: 'insufficient_quota' });
    expect(refused[0]!.body.error.message).toMatch(
      /^The usage limit of the API key cannot hold this request: 0 of 1000 tokens used; this request needs up to \d{4,} tokens \(\d+ prompt \+ 20 output tokens at most\)/,
    );

    const large = await budgetedKey(g.admin, g.baseUrl, { credit_limit: 40_000, type: 'tokens' });
    const results = await Promise.all(
      Array.from({ length: 30 }, () => large.client.post('/v1/chat/completions', budgetBody('tools'), g.viaMock)),
    );
    const admitted = results.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThan(30);
    await g.logs(60);
    await g.server.limits.flush();
    const used = await settledUsage(g.admin, large.id, reported(results));
    expect(used).toBe(reported(results));
    expect(used).toBeLessThanOrEqual(40_000);
  });

  it('reserves the model’s maximum output when the request sets no max_tokens', async () => {
    const g = await startGateway({ mock: { tokenizerUsage: true } });
    const key = await budgetedKey(g.admin, g.baseUrl, { credit_limit: 10_000, type: 'tokens' });
    const { max_tokens: _none, ...unbounded } = budgetBody('english');
    const refused = await key.client.post('/v1/chat/completions', unbounded, g.viaMock);
    expect(refused.status).toBe(402);
    // gpt-4o's maximum output, from config/capabilities/openai.json.
    expect(refused.body.error.message).toMatch(
      /\+ 16384 output tokens at most\)\. Setting max_tokens lowers what a request reserves\.$/,
    );
    expect((await key.client.post('/v1/chat/completions', { ...unbounded, max_tokens: 50 }, g.viaMock)).status).toBe(
      200,
    );
  });

  it('refuses a model without a price under a cost budget, unless a default price is configured', async () => {
    const g = await startGateway({ mock: { tokenizerUsage: true } });
    const key = await budgetedKey(g.admin, g.baseUrl, { credit_limit: 1, type: 'cost' });
    const unpriced = { ...budgetBody('english'), model: 'house-model-7b' };
    const refused = await key.client.post('/v1/chat/completions', unpriced, g.viaMock);
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('USAGE_LIMIT_EXCEEDED');
    expect(refused.body.error.message).toBe(
      "The usage limit of the API key is a cost budget and this request's model has no price, so its cost cannot be bounded; add a price for the model or set default_model_price.",
    );
    expect(g.mock.requests).toHaveLength(0);

    // At $1 / $2 per million tokens, a dollar holds the request; it is charged at that price.
    const priced = await startGateway({ mock: { tokenizerUsage: true }, env: { SVCGW_DEFAULT_MODEL_PRICE: '1/2' } });
    const key2 = await budgetedKey(priced.admin, priced.baseUrl, { credit_limit: 1, type: 'cost' });
    const served = await key2.client.post('/v1/chat/completions', unpriced, priced.viaMock);
    expect(served.status).toBe(200);
    await priced.logs(1);
    await priced.server.limits.flush();
    const { prompt_tokens: prompt, completion_tokens: completion } = served.body.usage;
    const expected = (prompt * 1 + completion * 2) / 1e6;
    expect(await settledUsage(priced.admin, key2.id, expected)).toBeCloseTo(expected, 12);
  });
});

describe.skipIf(!hasRedis)('budgets hold across two instances sharing Redis', () => {
  it('30 concurrent English, Chinese and tools requests split over two processes never take a 1,000-token budget past its limit', async () => {
    const dataDir = makeTempDir();
    const adminKey = `budget-test-${'b'.repeat(30)}`;
    const env = {
      SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey,
      SVCGW_REDIS_URL: REDIS_URL,
      SVCGW_REDIS_KEY_PREFIX: `svcgw-test-${randomUUID()}:`,
    };
    const first = await spawnServe(['--data-dir', dataDir], env);
    const second = await spawnServe(['--data-dir', dataDir], env);
    const provider = await startMockOpenAI({ tokenizerUsage: true });
    onTestFinished(() => provider.close());
    const headers = {
      'x-service-provider': 'openai',
      'x-service-custom-host': provider.baseUrl,
      authorization: 'Bearer k',
    };
    const admin = apiClient(first.url, adminKey);

    for (const kind of ['english', 'chinese', 'tools'] as BudgetBodyKind[]) {
      const key = await budgetedKey(admin, first.url, { credit_limit: 1000, type: 'tokens' });
      const clients = [key.client, apiClient(second.url, key.key)];
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => clients[i % 2]!.post('/v1/chat/completions', budgetBody(kind), headers)),
      );
      expect(results.every((r) => r.status === 200 || r.status === 402)).toBe(true);
      const admitted = results.filter((r) => r.status === 200).length;
      if (kind === 'tools')
        expect(admitted).toBe(0); // one request needs more than the whole budget
      else expect(admitted).toBeGreaterThan(0);
      const used = await settledUsage(admin, key.id, reported(results));
      expect(used).toBe(reported(results));
      expect(used).toBeLessThanOrEqual(1000);
    }
  });
});
