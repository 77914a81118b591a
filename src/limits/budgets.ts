import { andThen, type MaybePromise } from '../lib/maybe-promise.js';
import { costFromPrice, type ModelPrice } from '../pricing/pricing-service.js';
import type { CounterCheck, CounterStore } from './counter-store.js';
import { bucketOf, matchesAll, type Condition, type RequestFacts } from './matching.js';

/** A budget as configured: a policy (which matches and groups), or the limit of a key, a workspace or a deployment. */
export interface BudgetSource {
  scopeType: 'policy' | 'api_key' | 'workspace' | 'deployment' | 'provider' | 'virtual_key';
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
  /** Whose administrators its alerts go to; null (a deployment's budget): the organisation's. */
  workspaceId: string | null;
  /** Addresses its alerts also go to: the API key's `alert_emails`. */
  alsoTo?: readonly string[];
  /** Policies match and group; the limits of a key or a workspace apply to all its requests. */
  conditions?: Condition[];
  groupBy?: Array<{ key: string }>;
}

/** One budget bucket that applies to a request in the current period. */
export interface Budget extends Omit<BudgetSource, 'conditions' | 'groupBy'> {
  valueKey: string;
  organisationId: string;
}

/** The most a request can use (docs/limits.md): what budgets reserve before it runs. */
export interface Estimate {
  /** USD; null when the model has no price. */
  cost: number | null;
  tokens: number;
  promptTokens: number;
  completionTokens: number;
}

export interface Reservation {
  budgets: Budget[];
  amounts: number[];
  /** The configured default price, when the model had none: the real cost is figured with it. */
  defaultPrice?: ModelPrice | undefined;
}

/** What a finished request used; `usage` splits the tokens, for pricing at the default price. */
export interface ActualUsage {
  cost: number | null;
  tokens: number | null;
  usage?:
    { promptTokens: number | null; completionTokens: number | null; cachedTokens: number | null } | null | undefined;
}

/** Cumulative budgets keep their counter this long (the store needs an expiry). */
const CUMULATIVE_TTL_MS = 10 * 365 * 24 * 3600 * 1000;
/** Reserved at the least (a GET reserves nothing else): it makes a budget that is already spent refuse the request. */
const MIN_RESERVATION = 1e-9;

export const budgetCounterKey = (
  scopeType: Budget['scopeType'],
  scopeId: string,
  valueKey: string,
  periodStart: string,
) => `ul:${scopeType}:${scopeId}:${valueKey}:${periodStart}`;
const keys = new WeakMap<Budget, string>();
/** The counter key of a budget bucket, built once per budget object (budgets are remembered per policy set). */
export function budgetKey(budget: Budget): string {
  let key = keys.get(budget);
  if (key === undefined) {
    key = budgetCounterKey(budget.scopeType, budget.scopeId, budget.valueKey, budget.periodStart);
    keys.set(budget, key);
  }
  return key;
}

export function applicableBudgets(sources: readonly BudgetSource[], facts: RequestFacts): Budget[] {
  const budgets: Budget[] = [];
  for (const source of sources) {
    if (source.conditions && !matchesAll(source.conditions, facts)) continue;
    // Field by field: an object rest (`{ conditions, groupBy, ...rest }`) took a slow runtime path on every request.
    budgets.push({
      scopeType: source.scopeType,
      scopeId: source.scopeId,
      label: source.label,
      name: source.name,
      type: source.type,
      creditLimit: source.creditLimit,
      alertThreshold: source.alertThreshold,
      periodStart: source.periodStart,
      resetAt: source.resetAt,
      workspaceId: source.workspaceId,
      valueKey: source.groupBy ? bucketOf(source.groupBy, facts) : '',
      organisationId: facts.organisationId,
    });
  }
  return budgets;
}

/** What an estimate or a usage amounts to in a budget: its cost or its tokens. */
export const amountFor = (budget: Budget, value: { cost: number | null; tokens: number | null }): number =>
  budget.type === 'cost' ? (value.cost ?? 0) : (value.tokens ?? 0);

/**
 * The real amount of one budget: a cost the pricing could not figure (a fallback target
 * without a price) is priced at the default price when one was configured, else the
 * reservation stands; it never becomes $0.
 */
function realAmount(
  budget: Budget,
  actual: ActualUsage,
  reserved: number,
  defaultPrice: ModelPrice | undefined,
): number {
  if (budget.type === 'tokens') return actual.tokens ?? reserved;
  if (actual.cost !== null) return actual.cost;
  const byDefault =
    defaultPrice && actual.usage
      ? costFromPrice(defaultPrice, {
          promptTokens: actual.usage.promptTokens,
          completionTokens: actual.usage.completionTokens,
          cachedTokens: actual.usage.cachedTokens,
        })
      : null;
  return byDefault ?? reserved;
}

const expiry = (budget: Budget, now: number) => budget.resetAt ?? now + CUMULATIVE_TTL_MS;

/**
 * Reserves the estimate in every budget at once, before the upstream call: with N requests in
 * flight against a budget that holds k estimates, exactly k are admitted. `limitShare` below 1
 * admits only while that share of each credit limit holds the reservation (the byte bound's rule).
 */
export function reserve(
  store: CounterStore,
  budgets: Budget[],
  estimate: Estimate,
  now: number,
  defaultPrice?: ModelPrice,
  limitShare = 1,
): MaybePromise<ReserveResult> {
  // Mapped, not pushed: an array grown from empty by push reserves room for 17 elements.
  const amounts = budgets.map((budget) => Math.max(amountFor(budget, estimate), MIN_RESERVATION));
  const checks = budgets.map((budget, i): CounterCheck => ({
    key: budgetKey(budget),
    limit: budget.creditLimit * limitShare,
    amount: amounts[i]!,
    expiresAt: expiry(budget, now),
  }));
  return andThen(store.consume(checks, now), (result): ReserveResult => {
    if (!result.allowed)
      return { ok: false, budget: budgets[result.index]!, used: result.count, needed: amounts[result.index]! };
    const reservation: Reservation = { budgets, amounts };
    if (defaultPrice) reservation.defaultPrice = defaultPrice;
    return { ok: true, reservation };
  });
}

export type ReserveResult =
  { ok: true; reservation: Reservation } | { ok: false; budget: Budget; used: number; needed: number };

/** Replaces each reservation by the real cost (or tokens); with `actual` null, releases it. */
export function settle(
  store: CounterStore,
  reservation: Reservation,
  actual: ActualUsage | null,
  now: number,
): MaybePromise<number[]> {
  const real = reservation.budgets.map((budget, i) =>
    actual ? realAmount(budget, actual, reservation.amounts[i]!, reservation.defaultPrice) : 0,
  );
  const entries = reservation.budgets.map((budget, i) => ({
    key: budgetKey(budget),
    amount: real[i]! - reservation.amounts[i]!,
    expiresAt: expiry(budget, now),
  }));
  return andThen(store.add(entries, now), () => real);
}
