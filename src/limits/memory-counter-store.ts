import type { Db } from '../storage/database.js';
import type { Logger } from '../telemetry/logger.js';
import type { ConsumeResult, CounterCheck, CounterStore } from './counter-store.js';

interface Counter {
  count: number;
  expiresAt: number;
}

/**
 * Counters of a single instance, in memory. JavaScript runs one check at a time, so
 * check-and-add is atomic without locks. Changed counters are written to the database in
 * batches (never on the request path) and read back at start-up, so that a daily or weekly
 * window survives a restart.
 */
export async function createMemoryCounterStore(deps: {
  db: Db;
  logger: Logger;
  now: () => number;
  flushIntervalMs?: number;
}): Promise<CounterStore & { flush(): Promise<void> }> {
  const counters = new Map<string, Counter>();
  const dirty = new Set<string>();
  const loadedAt = deps.now();
  for (const row of await deps.db
    .selectFrom('limit_counters')
    .selectAll()
    .where('expires_at', '>', loadedAt)
    .execute()) {
    counters.set(row.key, { count: row.count, expiresAt: row.expires_at });
  }

  const current = (key: string, now: number): number => {
    const counter = counters.get(key);
    if (!counter) return 0;
    if (counter.expiresAt <= now) {
      counters.delete(key);
      return 0;
    }
    return counter.count;
  };
  const set = (key: string, count: number, expiresAt: number) => {
    // In place when the counter exists: one object per live counter, not one per request.
    const counter = counters.get(key);
    if (counter) {
      counter.count = count;
      counter.expiresAt = expiresAt;
    } else counters.set(key, { count, expiresAt });
    dirty.add(key);
  };

  let writing: Promise<void> = Promise.resolve();
  async function flush(): Promise<void> {
    const keys = [...dirty];
    dirty.clear();
    const now = deps.now();
    const rows = keys.flatMap((key) => {
      const counter = counters.get(key);
      return counter ? [{ key, count: counter.count, expires_at: counter.expiresAt }] : [];
    });
    writing = writing.then(async () => {
      try {
        await deps.db.transaction().execute(async (trx) => {
          for (let i = 0; i < rows.length; i += 300) {
            await trx
              .insertInto('limit_counters')
              .values(rows.slice(i, i + 300))
              .onConflict((oc) =>
                oc.column('key').doUpdateSet((eb) => ({
                  count: eb.ref('excluded.count'),
                  expires_at: eb.ref('excluded.expires_at'),
                })),
              )
              .execute();
          }
          await trx.deleteFrom('limit_counters').where('expires_at', '<=', now).execute();
        });
      } catch (error) {
        deps.logger.error({ err: error }, 'persisting rate-limit counters failed; will retry');
        for (const row of rows) dirty.add(row.key);
      }
    });
    await writing;
  }
  const timer = setInterval(() => {
    if (dirty.size > 0) void flush();
    // Forget expired windows so that memory stays bounded by the live ones.
    const now = deps.now();
    for (const [key, counter] of counters) if (counter.expiresAt <= now) counters.delete(key);
  }, deps.flushIntervalMs ?? 1000);
  timer.unref();

  const consume = (checks: CounterCheck[], now: number): ConsumeResult => {
    const counts = checks.map((check) => current(check.key, now));
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      if (counts[i]! + check.amount > check.limit) return { allowed: false, index: i, count: counts[i]! };
    }
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      counts[i]! += check.amount;
      set(check.key, counts[i]!, check.expiresAt);
    }
    return { allowed: true, counts };
  };

  // Answers without promises: the calls on every request need no async frame nor a microtask.
  return {
    consume,
    peek: (keys, now) => keys.map((key) => current(key, now)),
    add(entries, now) {
      for (const entry of entries) set(entry.key, Math.max(0, current(entry.key, now) + entry.amount), entry.expiresAt);
    },
    flush,
    /** In this process: always there. */
    async ping(): Promise<void> {},
    async close(): Promise<void> {
      clearInterval(timer);
      await flush();
    },
  };
}
