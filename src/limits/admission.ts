import type { Reservation } from './budgets.js';
import type { AppliedRateLimit, RateHeaders } from './rate-limiter.js';

/** What the gateway keeps between admitting a request and settling it. */
export interface Admission {
  tokenLimits: AppliedRateLimit[];
  reservation: Reservation | null;
  headers: RateHeaders | null;
}

/** Adds what a credential's limits admitted to the request's admission, so that the request's settlement covers them. */
export function mergeAdmission(admission: Admission, own: Pick<Admission, 'tokenLimits' | 'reservation'>): void {
  if (own.tokenLimits.length > 0) admission.tokenLimits = [...admission.tokenLimits, ...own.tokenLimits];
  if (!own.reservation || own.reservation.budgets.length === 0) return;
  const current = admission.reservation;
  admission.reservation = current
    ? {
        budgets: [...current.budgets, ...own.reservation.budgets],
        amounts: [...current.amounts, ...own.reservation.amounts],
        defaultPrice: current.defaultPrice ?? own.reservation.defaultPrice,
      }
    : own.reservation;
}
