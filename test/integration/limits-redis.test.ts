import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createRedisCounterStore } from '../../src/limits/redis-counter-store.js';
import { spawnServe } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { REDIS_URL, redisAvailable } from '../helpers/services.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const hasRedis = await redisAvailable();
const silent = pino({ level: 'silent' });
const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

describe.skipIf(!hasRedis)('limits shared through Redis', () => {
  it('never lets two clients of one Redis overshoot a limit together', async () => {
    const keyPrefix = `svcgw-test-${randomUUID()}:`;
    const a = await createRedisCounterStore({ url: REDIS_URL, keyPrefix, logger: silent });
    const b = await createRedisCounterStore({ url: REDIS_URL, keyPrefix, logger: silent });
    onTestFinished(async () => {
      await a.close();
      await b.close();
    });
    const now = Date.now();
    const check = { key: 'rl:test', limit: 10, amount: 1, expiresAt: now + 60_000 };
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => (i % 2 ? a : b).consume([check], now)),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect(await a.peek(['rl:test'], now)).toEqual([10]);
    // All-or-nothing: a refused check adds to none of the counters.
    const pair = await a.consume([{ ...check, key: 'rl:other', limit: 5 }, check], now);
    expect(pair.allowed).toBe(false);
    expect(await b.peek(['rl:other'], now)).toEqual([0]);
    await a.add([{ key: 'rl:test', amount: -20, expiresAt: now + 60_000 }], now);
    expect(await b.peek(['rl:test'], now)).toEqual([0]);
  });

  it('enforces one limit across two gateway processes sharing Redis', async () => {
    // Both processes share the database file (SQLite in WAL mode) and the Redis counters.
    const dataDir = makeTempDir();
    const adminKey = `redis-test-${'r'.repeat(30)}`;
    const env = {
      SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey,
      SVCGW_REDIS_URL: REDIS_URL,
      SVCGW_REDIS_KEY_PREFIX: `svcgw-test-${randomUUID()}:`,
    };
    const first = await spawnServe(['--data-dir', dataDir], env);
    const second = await spawnServe(['--data-dir', dataDir], env);
    const mock = (await import('../helpers/mock-openai-upstream.js')).startMockOpenAI;
    const provider = await mock();
    onTestFinished(() => provider.close());
    const headers = {
      'x-service-provider': 'openai',
      'x-service-custom-host': provider.baseUrl,
      authorization: 'Bearer k',
    };

    const created = await apiClient(first.url, adminKey).post('/v1/policies/rate-limits', {
      workspace_id: 'default',
      conditions: [{ key: 'workspace_id', value: 'default' }],
      group_by: [{ key: 'workspace_id' }],
      type: 'requests',
      unit: 'rpd',
      value: 10,
    });
    expect(created.status).toBe(200);
    const clients = [apiClient(first.url, adminKey), apiClient(second.url, adminKey)];
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => clients[i % 2]!.post('/v1/chat/completions', chat, headers)),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 429)).toHaveLength(20);
    expect(provider.requests).toHaveLength(10);
    // Each process admitted some: the limit really was shared.
    const admittedBy = [0, 1].map((p) => results.filter((r, i) => i % 2 === p && r.status === 200).length);
    expect(admittedBy[0]! + admittedBy[1]!).toBe(10);
  });
});

describe('when the counter store is unreachable', () => {
  it('refuses gateway requests with 503 when failing closed, and lets them through when failing open', async () => {
    const closedPort = 'redis://127.0.0.1:1';
    const closed = await startGateway({
      env: { SVCGW_REDIS_URL: closedPort, SVCGW_LIMITS_ON_STORE_FAILURE: 'closed' },
    });
    await closed.admin.post('/v1/policies/rate-limits', {
      workspace_id: 'default',
      conditions: [{ key: 'workspace_id', value: 'default' }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 100,
    });
    const refused = await closed.admin.post('/v1/chat/completions', chat, closed.viaMock);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('LIMITS_UNAVAILABLE');
    expect(closed.mock.requests).toHaveLength(0);
    expect(closed.logLines.some((line) => line.includes('limit counter store failed'))).toBe(true);

    const open = await startGateway({ env: { SVCGW_REDIS_URL: closedPort, SVCGW_LIMITS_ON_STORE_FAILURE: 'open' } });
    await open.admin.post('/v1/policies/rate-limits', {
      workspace_id: 'default',
      conditions: [{ key: 'workspace_id', value: 'default' }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 100,
    });
    expect((await open.admin.post('/v1/chat/completions', chat, open.viaMock)).status).toBe(200);
  });
});
