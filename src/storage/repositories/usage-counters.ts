import type { Db } from '../database.js';

/** Settled usage of budget buckets (`current_usage`), by scope, bucket and period. */
export function createUsageCounterRepository(db: Db) {
  return {
    async currentUsage(scopeType: string, scopeId: string, valueKey: string, periodStart: string): Promise<number> {
      const row = await db
        .selectFrom('usage_counters')
        .select('current_usage')
        .where('scope_type', '=', scopeType)
        .where('scope_id', '=', scopeId)
        .where('value_key', '=', valueKey)
        .where('period_start', '=', periodStart)
        .executeTakeFirst();
      return row?.current_usage ?? 0;
    },
  };
}

export type UsageCounterRepository = ReturnType<typeof createUsageCounterRepository>;
