import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { estimateRequest } from '../../src/limits/estimate.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { startSmtp } from '../helpers/smtp-server.js';
import { startTestServer } from '../helpers/start-test-server.js';

// gpt-4o at $2.50 / $10 per million tokens. A request reserves the most it can use (its prompt
// counted with o200k plus the chat format, and its max_tokens); it then settles to what the
// provider reports: the mock counts like OpenAI (3 + 3 per message + role + content), and
// answers max_tokens = 5 completion tokens.
const priced = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(32) }], max_tokens: 5 };
const GPT_4O = { input: 2.5, output: 10 };
const estimate = await estimateRequest({
  endpointType: 'chatComplete',
  method: 'POST',
  body: priced,
  bodyBytes: 0,
  model: 'gpt-4o',
  price: GPT_4O,
  maxOutputTokens: null,
});
const RESERVED = { tokens: estimate.tokens, cost: estimate.cost! };
const USED_PROMPT = 3 + 3 + countTokens('user') + countTokens('x'.repeat(32));
const USED = { tokens: USED_PROMPT + 5, cost: (USED_PROMPT * 2.5 + 5 * 10) / 1e6 };
const honest = { mock: { tokenizerUsage: true } };

async function budgetKey(g: Awaited<ReturnType<typeof startGateway>>, usageLimits: Record<string, unknown>) {
  const created = await g.admin.post('/v1/api-keys/workspace/service', {
    name: 'budgeted',
    workspace_id: 'default',
    scopes: ['completions.write'],
    usage_limits: usageLimits,
  });
  expect(created.status).toBe(200);
  return {
    id: created.body.id as string,
    key: created.body.key as string,
    client: apiClient(g.baseUrl, created.body.key),
  };
}

describe('usage limits (budgets) on gateway traffic', () => {
  it('admits 5 of 30 concurrent requests against a budget that holds 5, and reports fractional current_usage', async () => {
    const g = await startGateway(honest);
    const key = await budgetKey(g, { credit_limit: RESERVED.cost * 5.05, type: 'cost' });
    const results = await Promise.all(
      Array.from({ length: 30 }, () => key.client.post('/v1/chat/completions', priced, g.viaMock)),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 402)).toHaveLength(25);
    expect(g.mock.requests).toHaveLength(5);
    const refused = results.find((r) => r.status === 402)!;
    expect(refused.body.error).toMatchObject({ code: 'USAGE_LIMIT_EXCEEDED', type: 'insufficient_quota' });
    expect(refused.body.error.message).toMatch(
      /^The usage limit of the API key cannot hold this request: [\d.e-]+ of [\d.e-]+ USD used; /,
    );
    expect(refused.body.error.message).toContain(
      `this request needs up to ${Number(RESERVED.cost.toPrecision(4))} USD (${estimate.promptTokens} prompt + 5 output tokens at most)`,
    );

    await g.logs(30);
    await g.server.limits.flush();
    const shown = await g.admin.get(`/v1/api-keys/${key.id}`);
    expect(shown.body.usage_limits.current_usage).toBeCloseTo(USED.cost * 5, 12);
    expect(Number.isInteger(shown.body.usage_limits.current_usage)).toBe(false);
  });

  it('releases the reservation when the provider fails, and resumes at once when the credit limit is raised', async () => {
    const g = await startGateway(honest);
    const key = await budgetKey(g, { credit_limit: USED.cost + RESERVED.cost * 0.9, type: 'cost' });
    g.mock.behave({ kind: 'error', status: 500 }, { times: 1 });
    expect((await key.client.post('/v1/chat/completions', priced, g.viaMock)).status).toBe(500);
    await g.logs(1);
    expect((await key.client.post('/v1/chat/completions', priced, g.viaMock)).status).toBe(200); // the failure cost nothing
    await g.logs(2);
    expect((await key.client.post('/v1/chat/completions', priced, g.viaMock)).status).toBe(402);

    expect(
      (
        await g.admin.put(`/v1/api-keys/${key.id}`, {
          usage_limits: { credit_limit: USED.cost * 2 + RESERVED.cost, type: 'cost' },
        })
      ).status,
    ).toBe(200);
    expect((await key.client.post('/v1/chat/completions', priced, g.viaMock)).status).toBe(200);
  });

  it('counts tokens for a tokens budget, streams included', async () => {
    const g = await startGateway(honest);
    // The first settles to what it used, the second fits in what is left; a third does not.
    const key = await budgetKey(g, { credit_limit: USED.tokens + RESERVED.tokens, type: 'tokens' });
    expect((await key.client.post('/v1/chat/completions', priced, g.viaMock)).status).toBe(200);
    const stream = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-service-api-key': key.key, 'content-type': 'application/json', ...g.viaMock },
      body: JSON.stringify({ ...priced, stream: true }),
    });
    expect(stream.status).toBe(200);
    await stream.text();
    await g.logs(2);
    const refused = await key.client.post('/v1/chat/completions', priced, g.viaMock);
    expect(refused.status).toBe(402);
    expect(refused.body.error.message).toContain(
      `cannot hold this request: ${USED.tokens * 2} of ${USED.tokens + RESERVED.tokens} tokens used; this request needs up to ${RESERVED.tokens} tokens`,
    );
  });

  it('applies a workspace’s usage_limits to every key of the workspace, and resumes when raised', async () => {
    const g = await startGateway(honest);
    const ws = await g.admin.post('/v1/workspaces', {
      name: 'Team',
      slug: 'team',
      usage_limits: { credit_limit: RESERVED.tokens, type: 'tokens' },
    });
    expect(ws.status).toBe(200);
    const created = await g.admin.post('/v1/api-keys/workspace/user', {
      name: 'member',
      workspace_id: 'team',
      scopes: ['completions.write'],
    });
    const key = apiClient(g.baseUrl, created.body.key);
    expect((await key.post('/v1/chat/completions', priced, g.viaMock)).status).toBe(200);
    await g.logs(1);
    const refused = await key.post('/v1/chat/completions', priced, g.viaMock);
    expect(refused.status).toBe(402);
    expect(refused.body.error.message).toMatch(/workspace team/);
    await g.server.limits.flush();
    // A workspace's usage_limits is an array, as the reference shapes it (at most one budget).
    expect((await g.admin.get('/v1/workspaces/team')).body.usage_limits).toMatchObject([
      { credit_limit: RESERVED.tokens, current_usage: USED.tokens },
    ]);
    expect(
      (await g.admin.put('/v1/workspaces/team', { usage_limits: { credit_limit: 100, type: 'tokens' } })).status,
    ).toBe(200);
    expect((await key.post('/v1/chat/completions', priced, g.viaMock)).status).toBe(200);
    // Other workspaces are not affected.
    expect((await g.admin.post('/v1/chat/completions', priced, g.viaMock)).status).toBe(200);
  });

  it('enforces a usage-limits policy per group_by bucket, lists its entities, and resets one bucket on request', async () => {
    const g = await startGateway(honest);
    const created = await g.admin.post('/v1/policies/usage-limits', {
      workspace_id: 'default',
      name: 'per user',
      conditions: [{ key: 'workspace_id', value: 'default' }],
      group_by: [{ key: 'metadata.user' }],
      type: 'tokens',
      credit_limit: RESERVED.tokens,
    });
    expect(created.status).toBe(200);
    const as = (user: string) => ({ ...g.viaMock, 'x-service-metadata': JSON.stringify({ user }) });
    expect((await g.admin.post('/v1/chat/completions', priced, as('ann'))).status).toBe(200);
    await g.logs(1);
    const refused = await g.admin.post('/v1/chat/completions', priced, as('ann'));
    expect(refused.status).toBe(402);
    expect(refused.body.error.message).toMatch(/per user/);
    expect((await g.admin.post('/v1/chat/completions', priced, as('bob'))).status).toBe(200);
    await g.logs(3);
    await g.server.limits.flush();
    const entities = await g.admin.get(`/v1/policies/usage-limits/${created.body.id}/entities`);
    const usage = Object.fromEntries(entities.body.data.map((e: any) => [e.value_key, e.current_usage]));
    expect(usage).toMatchObject({ ann: USED.tokens, bob: USED.tokens });

    expect((await g.admin.put(`/v1/policies/usage-limits/${created.body.id}/entities/ann/reset`, {})).status).toBe(200);
    expect((await g.admin.post('/v1/chat/completions', priced, as('ann'))).status).toBe(200);
    expect((await g.admin.post('/v1/chat/completions', priced, as('bob'))).status).toBe(402);
  });

  it('resets on schedule, also after a restart, and raises each alert once by e-mail', async () => {
    const smtp = await startSmtp();
    const clock = createManualClock(Date.parse('2026-05-06T12:00:00Z')); // a Wednesday
    const t = await startTestServer({
      clock,
      autoClose: false,
      env: { SVCGW_SMTP_HOST: '127.0.0.1', SVCGW_SMTP_PORT: String(smtp.port) },
    });
    const mock = await (await import('../helpers/mock-openai-upstream.js')).startMockOpenAI({ tokenizerUsage: true });
    const headers = {
      'x-service-provider': 'openai',
      'x-service-custom-host': mock.baseUrl,
      authorization: 'Bearer k',
    };
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/api-keys/workspace/service', {
      name: 'weekly',
      workspace_id: 'default',
      scopes: ['completions.write'],
      usage_limits: {
        credit_limit: USED.cost + RESERVED.cost,
        alert_threshold: USED.cost * 0.5,
        type: 'cost',
        periodic_reset: 'weekly',
      },
    });
    const key = apiClient(t.baseUrl, created.body.key);
    expect((await admin.get(`/v1/api-keys/${created.body.id}`)).body.usage_limits.next_usage_reset_at).toBe(
      '2026-05-11T00:00:00.000Z',
    );

    expect((await key.post('/v1/chat/completions', priced, headers)).status).toBe(200);
    // The second is billed the whole of what it reserved, which brings the budget to its limit.
    const usage = { prompt_tokens: estimate.promptTokens, completion_tokens: 5, total_tokens: estimate.tokens };
    const billedInFull = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage,
    };
    mock.behave(
      {
        kind: 'raw',
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify(billedInFull)),
      },
      { times: 1 },
    );
    expect((await key.post('/v1/chat/completions', priced, headers)).status).toBe(200);
    await admin.get('/v1/logs');
    expect((await key.post('/v1/chat/completions', priced, headers)).status).toBe(402);
    await admin.get('/v1/logs');
    await t.server.limits.flush();
    await t.server.notifications.worker!.runOnce();
    const kinds = smtp.received.map((mail) => /^X-Svcgw-Notification-Kind: (.*)$/im.exec(mail.raw)?.[1]?.trim());
    expect(kinds.sort()).toEqual(['usage_limit.exhausted', 'usage_limit.threshold']);
    expect(smtp.received[0]!.rcptTo).toContain('owner@svcgw.local');
    await t.server.notifications.worker!.runOnce();
    expect(smtp.received).toHaveLength(2);

    // Monday 00:00 passes while the server is down; the reset happens when it starts again.
    await t.close();
    clock.set(Date.parse('2026-05-11T00:00:05Z'));
    const again = await startTestServer({
      clock,
      dataDir: t.dataDir,
      env: { SVCGW_SMTP_HOST: '127.0.0.1', SVCGW_SMTP_PORT: String(smtp.port) },
    });
    const key2 = apiClient(again.baseUrl, created.body.key);
    expect((await key2.post('/v1/chat/completions', priced, headers)).status).toBe(200);
    const shown = await apiClient(again.baseUrl, t.adminKey).get(`/v1/api-keys/${created.body.id}`);
    expect(shown.body.usage_limits).toMatchObject({
      last_reset_at: '2026-05-11T00:00:00.000Z',
      next_usage_reset_at: '2026-05-18T00:00:00.000Z',
    });
    await mock.close();
  });
});
