import { AppError } from '../lib/errors.js';
import type { ModelPrice } from '../pricing/pricing-service.js';
import { andThen, type MaybePromise } from '../lib/maybe-promise.js';
import { amountFor, reserve, type Budget, type Estimate, type Reservation, type ReserveResult } from './budgets.js';
import type { CounterStore } from './counter-store.js';
import { costOfTokens, type EstimateBound } from './estimate.js';

/**
 * The byte bound (no encoding table) is reserved only while the budget keeps at least this share
 * of its credit limit free after it, settled usage and every reservation in flight counted: byte
 * holds in flight then never add up to more than the rest, and the budget's last stretch, where
 * refusals happen, is reserved with exact counts (docs/limits.md, "Counting only near the limit").
 */
export const BYTE_BOUND_KEEPS_FREE = 0.5;
/** ... and only when it is at most this share of the credit limit: one large request is counted exactly. */
export const BYTE_BOUND_MAX_SHARE = 1 / 16;

/** Runs a store call under `limits_on_store_failure` (refuse with 503, or let the request through unlimited). */
export type StoreGuard = <T>(work: () => MaybePromise<T>, fallback: T) => MaybePromise<T>;

export interface ReservationDeps {
  store: CounterStore;
  guarded: StoreGuard;
  defaultPrice: ModelPrice | undefined;
}

/** What a failed-open store call leaves: nothing reserved, nothing to settle. */
const UNLIMITED: ReserveResult = { ok: true, reservation: { budgets: [], amounts: [] } };

/**
 * Reserves a request's estimate in every budget at once, or throws USAGE_LIMIT_EXCEEDED. A cost
 * budget needs a price: the model's, else `default_model_price`. The byte bound is tried first
 * when the budgets have ample room (see BYTE_BOUND_KEEPS_FREE); otherwise, or when that attempt
 * does not fit, the prompt is counted with the model's encoding and the exact estimate decides,
 * so a request is refused only on its exact count. Answers without a promise when the store does
 * and the byte bound fits (the usual case in-process).
 */
export function reserveEstimate(
  deps: ReservationDeps,
  budgets: Budget[],
  bound: EstimateBound,
  now: number,
): MaybePromise<Reservation> {
  const defaultPrice = priceNeeded(budgets, bound.bytes, deps.defaultPrice);
  const bytes = withPrice(bound.bytes, defaultPrice);
  const { exact } = bound;
  if (!exact) return reserveOrRefuse(deps, budgets, bytes, now, defaultPrice);
  const counted = () =>
    exact().then((estimate) => reserveOrRefuse(deps, budgets, withPrice(estimate, defaultPrice), now, defaultPrice));
  if (!byteBoundFits(budgets, bytes)) return counted();
  const quick = deps.guarded(
    () => reserve(deps.store, budgets, bytes, now, defaultPrice, 1 - BYTE_BOUND_KEEPS_FREE),
    UNLIMITED,
  );
  return andThen(quick, (result) => (result.ok ? result.reservation : counted()));
}

/** Reserves `estimate` in every budget, or refuses the request with USAGE_LIMIT_EXCEEDED. */
function reserveOrRefuse(
  deps: ReservationDeps,
  budgets: Budget[],
  estimate: Estimate,
  now: number,
  defaultPrice: ModelPrice | undefined,
): MaybePromise<Reservation> {
  const reserved = deps.guarded(() => reserve(deps.store, budgets, estimate, now, defaultPrice), UNLIMITED);
  return andThen(reserved, (result) => {
    if (!result.ok)
      throw new AppError('USAGE_LIMIT_EXCEEDED', refusal(result.budget, result.used, result.needed, estimate));
    return result.reservation;
  });
}

/** The price a model without one is reserved and settled at, when a cost budget applies; refuses when there is none. */
function priceNeeded(
  budgets: Budget[],
  estimate: Estimate,
  configured: ModelPrice | undefined,
): ModelPrice | undefined {
  if (estimate.cost !== null) return undefined;
  const costBudget = budgets.find((budget) => budget.type === 'cost');
  if (!costBudget) return undefined;
  if (!configured)
    throw new AppError(
      'USAGE_LIMIT_EXCEEDED',
      `The ${costBudget.label} is a cost budget and this request's model has no price, so its cost cannot be bounded; add a price for the model or set default_model_price.`,
    );
  return configured;
}

const withPrice = (estimate: Estimate, defaultPrice: ModelPrice | undefined): Estimate =>
  defaultPrice
    ? { ...estimate, cost: costOfTokens(defaultPrice, estimate.promptTokens, estimate.completionTokens) }
    : estimate;

function byteBoundFits(budgets: Budget[], estimate: Estimate): boolean {
  for (const budget of budgets)
    if (amountFor(budget, estimate) > budget.creditLimit * BYTE_BOUND_MAX_SHARE) return false;
  return true;
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;
const roundCost = (n: number) => Number(n.toPrecision(4));

/** What was used, the limit, and what this request needed; how to need less when the output bound was the model's maximum. */
function refusal(budget: Budget, used: number, needed: number, estimate: Estimate): string {
  const bucket = budget.valueKey ? ` (bucket ${budget.valueKey})` : '';
  const amount = budget.type === 'cost' ? `${roundCost(needed)} USD` : `${Math.ceil(needed)} tokens`;
  const detail = `${estimate.promptTokens} prompt + ${estimate.completionTokens} output tokens at most`;
  const reason = used >= budget.creditLimit ? 'is spent' : 'cannot hold this request';
  return `The ${budget.label} ${reason}: ${budget.type === 'cost' ? roundCost(used) : round(used)} of ${budget.creditLimit} ${budget.type === 'cost' ? 'USD' : 'tokens'} used${bucket}; this request needs up to ${amount} (${detail}). Setting max_tokens lowers what a request reserves.`;
}
