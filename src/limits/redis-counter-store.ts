import { Redis } from 'ioredis';
import type { Logger } from '../telemetry/logger.js';
import type { ConsumeResult, CounterCheck, CounterStore } from './counter-store.js';

/**
 * Check-and-add across every counter of a request in one step, inside Redis: the script runs
 * alone, so instances sharing the Redis cannot overshoot a limit together. TTLs are relative
 * (`PEXPIRE`), because each window's key already names its window: expiry only frees memory.
 */
const CONSUME = `
local n = #KEYS
for i = 1, n do
  local current = tonumber(redis.call('GET', KEYS[i]) or '0')
  if current + tonumber(ARGV[(i - 1) * 3 + 2]) > tonumber(ARGV[(i - 1) * 3 + 1]) then
    return {0, i - 1, tostring(current)}
  end
end
local counts = {}
for i = 1, n do
  counts[i] = redis.call('INCRBYFLOAT', KEYS[i], ARGV[(i - 1) * 3 + 2])
  redis.call('PEXPIRE', KEYS[i], ARGV[(i - 1) * 3 + 3])
end
return {1, counts}
`;

const ADD = `
for i = 1, #KEYS do
  local value = tonumber(redis.call('INCRBYFLOAT', KEYS[i], ARGV[(i - 1) * 2 + 1]))
  if value < 0 then redis.call('SET', KEYS[i], '0') end
  redis.call('PEXPIRE', KEYS[i], ARGV[(i - 1) * 2 + 2])
end
return 1
`;

type ConsumeReply = [0, number, string] | [1, string[]];

interface ScriptedRedis extends Redis {
  svcgwConsume(keyCount: number, ...args: Array<string | number>): Promise<ConsumeReply>;
  svcgwAdd(keyCount: number, ...args: Array<string | number>): Promise<number>;
}

const ttl = (expiresAt: number, now: number) => Math.max(1000, Math.ceil(expiresAt - now));

/** Counters shared by every instance that points at the same Redis (`redis_url`). */
export async function createRedisCounterStore(options: {
  url: string;
  keyPrefix: string;
  logger: Logger;
}): Promise<CounterStore> {
  const redis = new Redis(options.url, {
    // Fail fast while Redis is away, so the fail-open/closed setting decides, not a hung request.
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2000,
    keyPrefix: options.keyPrefix,
    lazyConnect: false,
  }) as ScriptedRedis;
  redis.defineCommand('svcgwConsume', { lua: CONSUME });
  redis.defineCommand('svcgwAdd', { lua: ADD });
  let down = false;
  redis.on('error', (error: Error) => {
    if (!down) options.logger.error({ err: error }, 'Redis connection error: limits follow limits_on_store_failure');
    down = true;
  });
  redis.on('ready', () => {
    if (down) options.logger.warn('Redis connection restored');
    down = false;
  });
  // Start-up waits (briefly) for the first connection, so that the first requests find it ready.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 3000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });

  return {
    async consume(checks: CounterCheck[], now: number): Promise<ConsumeResult> {
      if (checks.length === 0) return { allowed: true, counts: [] };
      const args = checks.flatMap((check) => [check.limit, check.amount, ttl(check.expiresAt, now)]);
      const reply = await redis.svcgwConsume(checks.length, ...checks.map((check) => check.key), ...args);
      if (reply[0] === 0) return { allowed: false, index: reply[1], count: Number(reply[2]) };
      return { allowed: true, counts: reply[1].map(Number) };
    },
    async peek(keys: string[]): Promise<number[]> {
      if (keys.length === 0) return [];
      return (await redis.mget(...keys)).map((value) => (value === null ? 0 : Number(value)));
    },
    async add(entries, now): Promise<void> {
      if (entries.length === 0) return;
      await redis.svcgwAdd(
        entries.length,
        ...entries.map((entry) => entry.key),
        ...entries.flatMap((entry) => [entry.amount, ttl(entry.expiresAt, now)]),
      );
    },
    async ping(timeoutMs: number): Promise<void> {
      // No offline queue: while disconnected PING fails at once; a hung server is bounded here.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis did not answer PING within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([redis.ping(), late]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close(): Promise<void> {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
