import type { CounterStore } from './counter-store.js';
import { bucketOf, matchesAll, type Condition, type RequestFacts } from './matching.js';

/** A budget as configured: a policy (which matches and groups), or the limit of a key or a workspace. */
export interface BudgetSource {
  scopeType: 'policy' | 'api_key' | 'workspace';
  scopeId: string;
  /** For messages: `usage limits policy "x" (id)`. */
  label: string;
  /** For alerts: the policy's, key's or workspace's own name. */
  name: string;
  type: 'cost' | 'tokens';
  creditLimit: number;
  alertThreshold: number | null;
  periodStart: string;
  /** When the period ends (next reset), or null for a cumulative limit. */
  resetAt: number | null;
  workspaceId: string;
  /** Policies match and group; the limits of a key or a workspace apply to all its requests. */
  conditions?: Condition[];
  groupBy?: Array<{ key: string }>;
}

/** One budget bucket that applies to a request in the current period. */
export interface Budget extends Omit<BudgetSource, 'conditions' | 'groupBy'> {
  valueKey: string;
  organisationId: string;
}

export interface Estimate {
  /** USD; null when the model has no price. */
  cost: number | null;
  tokens: number;
}

export interface Reservation {
  budgets: Budget[];
  amounts: number[];
}

/** Cumulative budgets keep their counter this long (the store needs an expiry). */
const CUMULATIVE_TTL_MS = 10 * 365 * 24 * 3600 * 1000;
/**
 * Reserved when the estimate is unknown (a model without a price): tiny, but it makes a
 * budget that is already spent refuse the request.
 */
const UNKNOWN_ESTIMATE = 1e-9;

export const budgetCounterKey = (scopeType: Budget['scopeType'], scopeId: string, valueKey: string, periodStart: string) => `ul:${scopeType}:${scopeId}:${valueKey}:${periodStart}`;
export const budgetKey = (budget: Budget) => budgetCounterKey(budget.scopeType, budget.scopeId, budget.valueKey, budget.periodStart);

export function applicableBudgets(sources: readonly BudgetSource[], facts: RequestFacts): Budget[] {
  return sources
    .filter((source) => !source.conditions || matchesAll(source.conditions, facts))
    .map(({ conditions: _conditions, groupBy, ...source }) => ({ ...source, valueKey: groupBy ? bucketOf(groupBy, facts) : '', organisationId: facts.organisationId }));
}

const amountFor = (budget: Budget, value: { cost: number | null; tokens: number | null }): number =>
  budget.type === 'cost' ? value.cost ?? 0 : value.tokens ?? 0;

const expiry = (budget: Budget, now: number) => budget.resetAt ?? now + CUMULATIVE_TTL_MS;

/**
 * Reserves the estimate in every budget at once, before the upstream call: with N requests in
 * flight against a budget that holds k estimates, exactly k are admitted.
 */
export async function reserve(store: CounterStore, budgets: Budget[], estimate: Estimate, now: number): Promise<{ ok: true; reservation: Reservation } | { ok: false; budget: Budget; used: number }> {
  const amounts = budgets.map((budget) => Math.max(amountFor(budget, estimate), UNKNOWN_ESTIMATE));
  const result = await store.consume(budgets.map((budget, i) => ({ key: budgetKey(budget), limit: budget.creditLimit, amount: amounts[i]!, expiresAt: expiry(budget, now) })), now);
  if (!result.allowed) return { ok: false, budget: budgets[result.index]!, used: result.count };
  return { ok: true, reservation: { budgets, amounts } };
}

/** Replaces each reservation by the real cost (or tokens); with `actual` null, releases it. */
export async function settle(store: CounterStore, reservation: Reservation, actual: { cost: number | null; tokens: number | null } | null, now: number): Promise<number[]> {
  const real = reservation.budgets.map((budget) => (actual ? amountFor(budget, actual) : 0));
  await store.add(reservation.budgets.map((budget, i) => ({ key: budgetKey(budget), amount: real[i]! - reservation.amounts[i]!, expiresAt: expiry(budget, now) })), now);
  return real;
}
