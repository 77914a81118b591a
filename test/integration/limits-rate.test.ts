import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';

const chat = (content = 'hi', extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', content }],
  ...extra,
});

async function policy(g: Awaited<ReturnType<typeof startGateway>>, body: Record<string, unknown>) {
  const res = await g.admin.post('/v1/policies/rate-limits', {
    workspace_id: 'default',
    group_by: [{ key: 'workspace_id' }],
    conditions: [{ key: 'workspace_id', value: 'default' }],
    ...body,
  });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

describe('rate limits on gateway traffic', () => {
  it('lets exactly 10 of 50 concurrent requests through a 10-per-minute policy; the rest get 429 and never reach the provider', async () => {
    const clock = createManualClock(Date.parse('2026-05-04T10:00:10Z'));
    const g = await startGateway({ clock });
    const id = await policy(g, { name: 'ten a minute', type: 'requests', unit: 'rpm', value: 10 });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => g.admin.post('/v1/chat/completions', chat(), g.viaMock)),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);
    expect(g.mock.requests).toHaveLength(10);

    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(refused.body.error.message).toContain(id);
    expect(refused.body.error.message).toContain('ten a minute');
    expect(refused.headers.get('retry-after')).toBe('50');
    expect(refused.headers.get('x-ratelimit-limit')).toBe('10');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset')).toBe('50');
    const admitted = results
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers.get('x-ratelimit-remaining')))
      .sort((a, b) => a - b);
    expect(admitted).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

    // The next minute is a new window.
    clock.advance(60_000);
    expect((await g.admin.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
    const logs = await g.logs(51);
    expect(logs.filter((l: any) => l.status_code === 429 && l.error_code === 'RATE_LIMITED')).toHaveLength(40);
  });

  it('counts per group_by bucket and skips archived policies', async () => {
    const g = await startGateway();
    const id = await policy(g, { type: 'requests', unit: 'rph', value: 1, group_by: [{ key: 'api_key' }] });
    const other = await createWorkspaceKey(g.admin, { workspace_id: 'default', scopes: ['completions.write'] });
    const second = apiClient(g.baseUrl, other.key);
    expect((await g.admin.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
    expect((await second.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
    expect((await g.admin.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(429);
    expect((await second.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(429);
    await g.admin.delete(`/v1/policies/rate-limits/${id}`);
    expect((await g.admin.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
  });

  it('applies conditions on metadata and on endpoint type', async () => {
    const g = await startGateway();
    await policy(g, {
      type: 'requests',
      unit: 'rpd',
      value: 1,
      conditions: [
        { key: 'metadata.team', value: 'ml' },
        { key: 'endpoint_type', value: 'chatComplete' },
      ],
      group_by: [{ key: 'metadata.user' }],
    });
    const ml = (user: string) => ({ ...g.viaMock, 'x-service-metadata': JSON.stringify({ team: 'ml', user }) });
    expect((await g.admin.post('/v1/chat/completions', chat(), ml('ann'))).status).toBe(200);
    expect((await g.admin.post('/v1/chat/completions', chat(), ml('ann'))).status).toBe(429);
    expect((await g.admin.post('/v1/chat/completions', chat(), ml('bob'))).status).toBe(200); // another bucket
    expect(
      (await g.admin.post('/v1/embeddings', { model: 'text-embedding-3-small', input: 'x' }, ml('ann'))).status,
    ).toBe(200); // another endpoint
    expect(
      (
        await g.admin.post('/v1/chat/completions', chat(), {
          ...g.viaMock,
          'x-service-metadata': JSON.stringify({ team: 'web', user: 'ann' }),
        })
      ).status,
    ).toBe(200);
  });

  it('admits requests while tokens remain and counts the real usage when the response ends, streams included', async () => {
    const clock = createManualClock(Date.parse('2026-05-04T10:00:00Z'));
    const g = await startGateway({ clock });
    await policy(g, { type: 'tokens', unit: 'rpm', value: 20 });
    // The mock reports ceil(chars/4) prompt tokens and 5 completion tokens: 8 + 5 = 13 per request.
    const prompt = 'x'.repeat(32);
    const first = await g.admin.post('/v1/chat/completions', chat(prompt), g.viaMock);
    expect(first.body.usage.total_tokens).toBe(13);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('20');
    const stream = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-service-api-key': g.adminKey, 'content-type': 'application/json', ...g.viaMock },
      body: JSON.stringify(chat(prompt, { stream: true })),
    });
    expect(stream.status).toBe(200);
    await stream.text();
    await g.logs(2); // both responses have been settled
    const refused = await g.admin.post('/v1/chat/completions', chat(prompt), g.viaMock);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/20 tokens/);
    clock.advance(60_000);
    expect((await g.admin.post('/v1/chat/completions', chat(prompt), g.viaMock)).status).toBe(200);
  });

  it('applies an API key’s own rate_limits', async () => {
    const g = await startGateway();
    const created = await g.admin.post('/v1/api-keys/workspace/service', {
      name: 'limited',
      workspace_id: 'default',
      scopes: ['completions.write'],
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 2 }],
    });
    expect(created.status).toBe(200);
    const key = apiClient(g.baseUrl, created.body.key);
    expect((await key.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
    expect((await key.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
    const third = await key.post('/v1/chat/completions', chat(), g.viaMock);
    expect(third.status).toBe(429);
    expect(third.body.error.message).toMatch(/API key/);
    expect((await g.admin.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
  });
});
