import { describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/lib/errors.js';
import {
  BYTE_BOUND_KEEPS_FREE,
  BYTE_BOUND_MAX_SHARE,
  reserveEstimate,
  type ReservationDeps,
} from '../../src/limits/budget-reservation.js';
import { budgetKey, type Budget, type Estimate } from '../../src/limits/budgets.js';
import type { CounterStore } from '../../src/limits/counter-store.js';
import type { EstimateBound } from '../../src/limits/estimate.js';

/**
 * Check-and-add in one synchronous step. It answers at once, as the in-process store does, or
 * with a promise, as Redis does: every decision below must come out the same either way.
 */
function mapStore(withPromises: boolean): CounterStore & { counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const answer = <T>(value: T) => (withPromises ? Promise.resolve(value) : value);
  return {
    counts,
    consume(checks) {
      const current = checks.map((check) => counts.get(check.key) ?? 0);
      const over = checks.findIndex((check, i) => current[i]! + check.amount > check.limit);
      if (over !== -1) return answer({ allowed: false as const, index: over, count: current[over]! });
      checks.forEach((check, i) => counts.set(check.key, current[i]! + check.amount));
      return answer({ allowed: true as const, counts: checks.map((check, i) => current[i]! + check.amount) });
    },
    peek(keys) {
      return answer(keys.map((key) => counts.get(key) ?? 0));
    },
    add(entries) {
      for (const entry of entries) counts.set(entry.key, (counts.get(entry.key) ?? 0) + entry.amount);
      return answer(undefined);
    },
    async ping() {},
    async close() {},
  };
}

const budget = (creditLimit: number, scopeId = 'key-1'): Budget => ({
  scopeType: 'api_key',
  scopeId,
  label: 'usage limit of the API key',
  name: 'k',
  type: 'tokens',
  creditLimit,
  alertThreshold: null,
  periodStart: '2026-01-01T00:00:00.000Z',
  resetAt: null,
  workspaceId: 'ws',
  valueKey: '',
  organisationId: 'org',
});

const tokens = (prompt: number, completion = 10): Estimate => ({
  cost: null,
  tokens: prompt + completion,
  promptTokens: prompt,
  completionTokens: completion,
});

/** A request whose prompt is `bytes` as UTF-8 and `exact` with the encoding; `exact` says when it was counted. */
function bound(bytes: number, exact: number | null) {
  const count = vi.fn(async () => tokens(exact!));
  const value: EstimateBound = { bytes: tokens(bytes), exact: exact === null ? null : count };
  return { value, count };
}

const guarded: ReservationDeps['guarded'] = (work) => work();

/** `reserveEstimate` as a promise: a refusal made at once comes back as a rejection too. */
const reserving = async (...args: Parameters<typeof reserveEstimate>) => reserveEstimate(...args);

describe.each([
  ['a store that answers at once (in-process)', false],
  ['a store that answers with a promise (Redis)', true],
])(
  'reserving a budget with %s: the byte bound while there is room, the exact count near the limit',
  (_, withPromises) => {
    function setUp(limit: number, used = 0) {
      const store = mapStore(withPromises);
      const b = budget(limit);
      if (used) store.counts.set(budgetKey(b), used);
      const deps: ReservationDeps = { store, guarded, defaultPrice: undefined };
      return { store, b, deps, used: () => store.counts.get(budgetKey(b)) ?? 0 };
    }

    it('reserves the byte bound without counting when the budget has ample room', async () => {
      const s = setUp(1000);
      const r = bound(40, 15); // 50 and 25 tokens with the output
      const answer = reserveEstimate(s.deps, [s.b], r.value, 0);
      // Nothing to wait for when the store answers at once: no promise on the request's path.
      expect(answer instanceof Promise).toBe(withPromises);
      const reservation = await answer;
      expect(reservation.amounts).toEqual([50]);
      expect(r.count).not.toHaveBeenCalled();
      expect(s.used()).toBe(50);
    });

    it('counts exactly when the byte bound would leave less than half the credit limit free', async () => {
      const s = setUp(1000, 1000 * (1 - BYTE_BOUND_KEEPS_FREE) - 49);
      const r = bound(40, 15);
      const reservation = await reserving(s.deps, [s.b], r.value, 0);
      expect(r.count).toHaveBeenCalledOnce();
      expect(reservation.amounts).toEqual([25]);
    });

    it('counts exactly a request whose byte bound is a large share of the credit limit, even on an empty budget', async () => {
      const s = setUp(1000);
      const r = bound(1000 * BYTE_BOUND_MAX_SHARE, 15); // 10 output tokens push it past the share
      expect((await reserving(s.deps, [s.b], r.value, 0)).amounts).toEqual([25]);
      expect(r.count).toHaveBeenCalledOnce();
    });

    it('admits a request its exact count fits even where its byte bound would not, and refuses on the exact count', async () => {
      const admitted = setUp(1000, 975);
      const r = bound(40, 15);
      expect((await reserving(admitted.deps, [admitted.b], r.value, 0)).amounts).toEqual([25]);
      expect(admitted.used()).toBe(1000);

      const refused = setUp(1000, 990);
      const error = await reserving(refused.deps, [refused.b], bound(40, 15).value, 0).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).message).toBe(
        'The usage limit of the API key cannot hold this request: 990 of 1000 tokens used; this request needs up to 25 tokens (15 prompt + 10 output tokens at most). Setting max_tokens lowers what a request reserves.',
      );
      expect(refused.used()).toBe(990);
    });

    it('reserves bytes against the whole limit when they are the count (no public encoding)', async () => {
      const s = setUp(1000, 950);
      expect((await reserving(s.deps, [s.b], bound(40, null).value, 0)).amounts).toEqual([50]);
      expect(s.used()).toBe(1000);
    });

    it('the tightest of several budgets decides which count is taken', async () => {
      const store = mapStore(withPromises);
      const roomy = budget(1_000_000, 'roomy');
      const tight = budget(600, 'tight');
      const r = bound(30, 10); // 40 bytes-bound > 600 / 16
      const reservation = await reserving({ store, guarded, defaultPrice: undefined }, [roomy, tight], r.value, 0);
      expect(reservation.amounts).toEqual([20, 20]);
      expect(r.count).toHaveBeenCalledOnce();
    });

    it('under concurrency, byte holds never pass half the credit limit and the rest is reserved exactly', async () => {
      const s = setUp(1000);
      const requests = Array.from({ length: 60 }, () => bound(40, 15));
      const results = await Promise.allSettled(requests.map((r) => reserving(s.deps, [s.b], r.value, 0)));
      const amounts = results.flatMap((r) => (r.status === 'fulfilled' ? r.value.amounts : []));
      const byteHolds = amounts.filter((a) => a === 50).length;
      expect(byteHolds * 50).toBeLessThanOrEqual(1000 * (1 - BYTE_BOUND_KEEPS_FREE));
      expect(byteHolds).toBe(10);
      // The other half holds exact reservations: 500 / 25 of them.
      expect(amounts.filter((a) => a === 25)).toHaveLength(20);
      expect(s.used()).toBe(1000);
      expect(results.filter((r) => r.status === 'rejected')).toHaveLength(30);
    });
  },
);
