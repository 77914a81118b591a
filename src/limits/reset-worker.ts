import type { Clock } from '../lib/clock.js';
import type { Db } from '../storage/database.js';
import type { Logger } from '../telemetry/logger.js';
import { runExclusive } from '../storage/job-lock.js';
import { nextResetAfter, type ResetSchedule } from './periods.js';
import type { UsageLimits } from './schemas.js';

type OwnLimits = UsageLimits & { last_reset_at?: string | null };

/**
 * Moves every budget whose `next_usage_reset_at` has passed into its next period. The period
 * start is part of each budget's counter key, so a new period starts from zero. Everything it
 * needs is in the database, so resets missed while the server was down happen at the next
 * start (each missed period is skipped, not replayed).
 */
export function createResetWorker(deps: { db: Db; clock: Clock; logger: Logger; onReset: () => void }) {
  const iso = (ms: number) => new Date(ms).toISOString();

  /** The last scheduled reset at or before now, and the one after it. */
  function advance(dueAt: number, schedule: ResetSchedule, now: number): { last: number; next: number | null } {
    let last = dueAt;
    let next = nextResetAfter(dueAt, schedule);
    while (next !== null && next <= now) {
      last = next;
      next = nextResetAfter(next, schedule);
    }
    return { last, next };
  }

  async function resetPolicies(now: number): Promise<number> {
    const due = await deps.db
      .selectFrom('usage_limit_policies')
      .selectAll()
      .where('status', '=', 'active')
      .where('next_usage_reset_at', 'is not', null)
      .where('next_usage_reset_at', '<=', iso(now))
      .execute();
    for (const policy of due) {
      const { last, next } = advance(Date.parse(policy.next_usage_reset_at!), policy, now);
      // Guarded by the old value: when two instances race, one reset wins and the other changes nothing.
      await deps.db
        .updateTable('usage_limit_policies')
        .set({
          last_reset_at: iso(last),
          next_usage_reset_at: next === null ? null : iso(next),
          last_updated_at: iso(now),
        })
        .where('id', '=', policy.id)
        .where('next_usage_reset_at', '=', policy.next_usage_reset_at)
        .execute();
    }
    return due.length;
  }

  async function resetOwn(
    table: 'api_keys' | 'workspaces' | 'deployments' | 'providers' | 'virtual_keys',
    now: number,
  ): Promise<number> {
    const rows = await deps.db
      .selectFrom(table)
      .select(['id', 'usage_limits'])
      .where('usage_limits', 'is not', null)
      .execute();
    let count = 0;
    for (const row of rows) {
      const limits = JSON.parse(row.usage_limits!) as OwnLimits;
      if (!limits.next_usage_reset_at || Date.parse(limits.next_usage_reset_at) > now) continue;
      const { last, next } = advance(Date.parse(limits.next_usage_reset_at), limits, now);
      const updated = JSON.stringify({
        ...limits,
        last_reset_at: iso(last),
        next_usage_reset_at: next === null ? null : iso(next),
      });
      await deps.db
        .updateTable(table)
        .set({ usage_limits: updated })
        .where('id', '=', row.id)
        .where('usage_limits', '=', row.usage_limits)
        .execute();
      count++;
    }
    return count;
  }

  let timer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;

  /** Budgets reset by this run; 0 too when another instance was running it. */
  async function runOnce(): Promise<number> {
    const done = await runExclusive(deps.db, 'usage-resets', resetDue);
    return done.ran ? done.value : 0;
  }

  async function resetDue(): Promise<number> {
    const now = deps.clock.now();
    const count =
      (await resetPolicies(now)) +
      (await resetOwn('api_keys', now)) +
      (await resetOwn('workspaces', now)) +
      (await resetOwn('deployments', now)) +
      (await resetOwn('providers', now)) +
      (await resetOwn('virtual_keys', now));
    if (count > 0) {
      deps.logger.info({ budgets: count }, 'usage limits reset for a new period');
      deps.onReset();
    }
    return count;
  }

  return {
    runOnce,
    start(intervalMs: number): void {
      const tick = () => {
        running ??= runOnce()
          .catch((error: unknown) => {
            deps.logger.error({ err: error }, 'usage limit reset failed');
            return 0;
          })
          .finally(() => (running = null));
      };
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
