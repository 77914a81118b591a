import { describe, expect, it } from 'vitest';
import { estimateRequest } from '../../src/limits/estimate.js';
import { loadedEncodings } from '../../src/limits/tokenizers.js';
import { budgetBody } from '../helpers/budget-bodies.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';

type Gateway = Awaited<ReturnType<typeof startGateway>>;

async function budgetedKey(g: Gateway, usageLimits: Record<string, unknown>) {
  const created = await g.admin.post('/v1/api-keys/workspace/service', {
    name: 'budgeted',
    workspace_id: 'default',
    scopes: ['completions.write'],
    usage_limits: usageLimits,
  });
  expect(created.status).toBe(200);
  return { id: created.body.id as string, client: apiClient(g.baseUrl, created.body.key) };
}

// The tests run in order in one process: the first must run before anything loads an encoding.
describe('budgets count prompts with the encoding only near their limit', () => {
  it('a request far from its budget’s limit reserves the byte bound and loads no encoding', async () => {
    const g = await startGateway({ mock: { tokenizerUsage: true } });
    const key = await budgetedKey(g, { credit_limit: 1_000_000, type: 'tokens' });
    const answer = await key.client.post('/v1/chat/completions', budgetBody('english'), g.viaMock);
    expect(answer.status).toBe(200);
    expect(loadedEncodings()).toEqual([]);
    // The byte hold is replaced by what the provider reported.
    await g.logs(1);
    let used = NaN;
    for (let attempt = 0; attempt < 100 && used !== answer.body.usage.total_tokens; attempt++) {
      await g.server.limits.flush();
      used = (await g.admin.get(`/v1/api-keys/${key.id}`)).body.usage_limits.current_usage;
    }
    expect(used).toBe(answer.body.usage.total_tokens);
  });

  it('near the limit a request is counted exactly: admitted when its exact count fits, refused on it when not', async () => {
    const body = budgetBody('english');
    const exact = await estimateRequest({
      endpointType: 'chatComplete',
      method: 'POST',
      body,
      bodyBytes: 0,
      model: 'gpt-4o',
      price: null,
      maxOutputTokens: null,
    });
    const g = await startGateway({ mock: { tokenizerUsage: true } });
    // Holds the exact estimate once; the byte bound (about four times the prompt) it would not.
    const key = await budgetedKey(g, { credit_limit: exact.tokens, type: 'tokens' });
    const first = await key.client.post('/v1/chat/completions', body, g.viaMock);
    expect(first.status).toBe(200);
    const second = await key.client.post('/v1/chat/completions', body, g.viaMock);
    expect(second.status).toBe(402);
    expect(second.body.error.message).toContain(
      `this request needs up to ${exact.tokens} tokens (${exact.promptTokens} prompt + 20 output tokens at most)`,
    );
    expect(g.mock.requests).toHaveLength(1);
  });
});
