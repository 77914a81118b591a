import { sql } from 'kysely';
import type { Clock } from '../lib/clock.js';
import type { Db } from '../storage/database.js';
import type { Logger } from '../telemetry/logger.js';
import { alertMessages } from '../notifications/index.js';
import type { AlertMessage } from '../notifications/alert-messages.js';
import type { Budget } from './budgets.js';

/** An alert about a budget, delivered through the notification outbox exactly once per dedupe key. */
export type BudgetAlert = AlertMessage & {
  organisationId: string;
  workspaceId: string | null;
  /** Addresses added to the usual recipients (an API key's `alert_emails`). */
  alsoTo?: readonly string[];
};

export interface AlertSink {
  raise(alert: BudgetAlert): Promise<void>;
}

interface Pending {
  budget: Budget;
  amount: number;
}

const bucketId = (b: Budget) => `${b.scopeType}\u0000${b.scopeId}\u0000${b.valueKey}\u0000${b.periodStart}`;

/**
 * Adds settled usage to `usage_counters` (what `current_usage` shows) in batches, and raises
 * the threshold and exhausted alerts when a bucket crosses them. Their dedupe keys name the
 * credit limit, threshold and period in force, so raising either (or clearing the threshold)
 * lets the alert fire again, as the spec's state table says.
 */
export function createUsageRecorder(deps: {
  db: Db;
  clock: Clock;
  logger: Logger;
  alerts: AlertSink;
  flushIntervalMs?: number;
}) {
  let pending = new Map<string, Pending>();
  let timer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();

  async function write(batch: Pending[]): Promise<void> {
    const stamp = new Date(deps.clock.now()).toISOString();
    for (const { budget, amount } of batch) {
      const row = await deps.db
        .insertInto('usage_counters')
        .values({
          scope_type: budget.scopeType,
          scope_id: budget.scopeId,
          value_key: budget.valueKey,
          period_start: budget.periodStart,
          current_usage: amount,
          last_updated_at: stamp,
        })
        .onConflict((oc) =>
          oc.columns(['scope_type', 'scope_id', 'value_key', 'period_start']).doUpdateSet({
            current_usage: sql<number>`usage_counters.current_usage + excluded.current_usage`,
            last_updated_at: stamp,
          }),
        )
        .returning('current_usage')
        .executeTakeFirstOrThrow();
      await checkAlerts(budget, row.current_usage);
    }
  }

  async function checkAlerts(budget: Budget, after: number): Promise<void> {
    const facts = {
      resourceType: budget.scopeType === 'policy' ? ('usage_limits_policy' as const) : budget.scopeType,
      // A policy counts per bucket: each bucket alerts on its own.
      resourceId: budget.valueKey ? `${budget.scopeId}/${budget.valueKey}` : budget.scopeId,
      resourceName: budget.name,
      currentUsage: Math.round(after * 1e6) / 1e6,
      creditLimit: budget.creditLimit,
      periodStartedAt: budget.periodStart,
    };
    const where = {
      organisationId: budget.organisationId,
      workspaceId: budget.workspaceId,
      ...(budget.alsoTo && budget.alsoTo.length > 0 ? { alsoTo: budget.alsoTo } : {}),
    };
    if (budget.alertThreshold !== null && after >= budget.alertThreshold) {
      await deps.alerts.raise({
        ...where,
        ...alertMessages.usageLimitThreshold({ ...facts, alertThreshold: budget.alertThreshold }),
      });
    }
    if (after >= budget.creditLimit) await deps.alerts.raise({ ...where, ...alertMessages.usageLimitExhausted(facts) });
  }

  async function flush(): Promise<void> {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    const batch = [...pending.values()];
    pending = new Map();
    if (batch.length > 0) {
      writing = writing.then(() =>
        write(batch).catch((error: unknown) => {
          deps.logger.error({ err: error }, 'recording budget usage failed');
        }),
      );
    }
    await writing;
  }

  return {
    record(budget: Budget, amount: number): void {
      if (amount <= 0) return;
      const id = bucketId(budget);
      const entry = pending.get(id);
      if (entry) {
        entry.amount += amount;
        entry.budget = budget;
      } else pending.set(id, { budget, amount });
      if (timer === null) {
        timer = setTimeout(() => void flush(), deps.flushIntervalMs ?? 200);
        timer.unref();
      }
    },
    flush,
  };
}

export type UsageRecorder = ReturnType<typeof createUsageRecorder>;
