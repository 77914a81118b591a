import type { Principal } from '../auth/principal.js';
import { ALL_ENABLED, type FeatureFlags } from '../features/flags.js';
import type { Clock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { andThen, type MaybePromise } from '../lib/maybe-promise.js';
import type { Repositories } from '../storage/repositories/index.js';
import type { Logger } from '../telemetry/logger.js';
import type { ModelPrice } from '../pricing/pricing-service.js';
import type { Admission } from './admission.js';
import {
  applicableBudgets,
  budgetCounterKey,
  settle,
  type ActualUsage,
  type BudgetSource,
  type Reservation,
} from './budgets.js';
import { ownBudget } from './budget-sources.js';
import { reserveEstimate, type ReservationDeps } from './budget-reservation.js';
import type { CounterStore } from './counter-store.js';
import { credentialLabel, type CredentialLimits } from './credential-limits.js';
import type { DeploymentLimits } from './deployment-limits.js';
import type { EstimateBound } from './estimate.js';
import { createLimitSources, type WorkspaceInfo } from './limit-sources.js';
import type { PolicySet } from './policy-set.js';
import type { RequestFacts } from './matching.js';
import { RateLimitedError } from './rate-limited-error.js';
import {
  checkRateLimits,
  credentialRateLimits,
  settleTokens,
  type AppliedRateLimit,
  type RateDecision,
} from './rate-limiter.js';
import { budgetsFor, rateLimitsFor } from './request-limits.js';
import type { UsageRecorder } from './usage-recorder.js';

export { mergeAdmission, type Admission } from './admission.js';
export { rateHeaders, RateLimitedError } from './rate-limited-error.js';

/** A request the rate limits let through. */
type Admitted = Extract<RateDecision, { allowed: true }>;

/** What a failed-open store leaves a request: no limit counted (read only; one object for all). */
const UNCOUNTED: RateDecision = { allowed: true, tokenLimits: [], headers: null };

type LimitsDeps = {
  features?: FeatureFlags;
  repos: Pick<Repositories, 'rateLimitPolicies' | 'usageLimitPolicies' | 'workspaces'>;
  store: CounterStore;
  clock: Clock;
  logger: Logger;
  recorder: UsageRecorder;
  failOpen: boolean;
  cacheTtlMs?: number;
  defaultPrice?: ModelPrice | undefined;
};

/** The estimate of a request as the gateway computes it: its byte bound, and its exact count on demand. */
export type EstimateOf = () => MaybePromise<EstimateBound>;

/**
 * Rate limits and budgets of gateway traffic. Active policies are cached per organisation so
 * that admitting a request reads no database (limit-sources.ts); what they make of a kind of
 * request is remembered on the cached policy set (policy-set.ts).
 */
export function createLimitsService(deps: LimitsDeps) {
  // Sources answer from memory nearly always: read synchronously then, an await per source per request is avoided.
  const sources = createLimitSources(deps);
  // USAGE_LIMITS_ENABLED=OFF: no budget of any kind is checked or counted.
  const features: FeatureFlags = deps.features ?? ALL_ENABLED;

  /** Store failures follow `limits_on_store_failure`: refuse (503) or let the request through unlimited. */
  function storeFailed<T>(error: unknown, fallback: T): T {
    if (error instanceof AppError) throw error;
    deps.logger.error({ err: error, failOpen: deps.failOpen }, 'limit counter store failed');
    if (deps.failOpen) return fallback;
    throw new AppError('LIMITS_UNAVAILABLE', 'Limits cannot be checked right now; try again shortly.', {
      cause: error,
    });
  }
  // Not an async function: it runs on every admitted request, and the in-process store answers without a promise.
  function guarded<T>(work: () => MaybePromise<T>, fallback: T): MaybePromise<T> {
    let result: MaybePromise<T>;
    try {
      result = work();
    } catch (error) {
      return storeFailed(error, fallback);
    }
    return result instanceof Promise ? result.catch((error: unknown) => storeFailed(error, fallback)) : result;
  }
  const reservations: ReservationDeps = { store: deps.store, guarded, defaultPrice: deps.defaultPrice };

  /** The organisation's active policies and the workspace's limits: from memory, or loaded. */
  function limitSources(facts: RequestFacts): MaybePromise<readonly [PolicySet, WorkspaceInfo]> {
    const policies = sources.cachedPolicies(facts.organisationId);
    const workspace = sources.cachedWorkspace(facts.workspaceId);
    if (policies && workspace) return [policies, workspace];
    return Promise.all([
      policies ?? sources.policiesOf(facts.organisationId),
      workspace ?? sources.workspaceOf(facts.workspaceId),
    ]);
  }

  /** Replaces a request's budget reservations by what it used, and tells the usage recorder. */
  function settleBudgets(
    reservation: Reservation | null,
    actual: ActualUsage | 'as-reserved' | null,
    now: number,
  ): MaybePromise<void> {
    if (!reservation || reservation.budgets.length === 0) return;
    // A response whose usage never arrived (a client that left mid-stream) keeps its estimate.
    const amounts = actual === 'as-reserved' ? reservation.amounts : settle(deps.store, reservation, actual, now);
    return andThen(amounts, (real) => {
      for (let i = 0; i < reservation.budgets.length; i++) deps.recorder.record(reservation.budgets[i]!, real[i]!);
    });
  }

  function countRequest(applied: AppliedRateLimit[], now: number): MaybePromise<Admitted> {
    return andThen(
      guarded(() => checkRateLimits(deps.store, applied, now), UNCOUNTED),
      (decision): Admitted => {
        if (!decision.allowed) throw new RateLimitedError(decision.limit, decision.headers, now);
        return decision;
      },
    );
  }

  return {
    /**
     * Facts about the request that conditions and group-by read, and the deployment that serves
     * it; without a promise when the workspace is in memory.
     */
    facts(
      principal: Principal,
      workspaceId: string,
      endpointType: string,
      metadata: Record<string, string> | null,
      deployment?: DeploymentLimits,
    ): MaybePromise<RequestFacts> {
      return andThen(sources.cachedWorkspace(workspaceId) ?? sources.workspaceOf(workspaceId), ({ slug }) => {
        const facts: RequestFacts = {
          organisationId: principal.organisationId,
          workspaceId,
          workspaceSlug: slug,
          apiKeyId: principal.keyId,
          endpointType,
          metadata,
        };
        // Set, not spread in: a spread of a temporary object took a slow path on every request.
        if (deployment) facts.deployment = deployment;
        return facts;
      });
    },

    /**
     * Checks and counts rate limits; throws RATE_LIMITED (with the headers to send) when one is
     * reached. Without a promise when the policies are cached and the store answers at once.
     */
    admitRate(principal: Principal, facts: RequestFacts): MaybePromise<Pick<Admission, 'tokenLimits' | 'headers'>> {
      return andThen(limitSources(facts), ([policies, workspace]) => {
        const now = deps.clock.now();
        const applied = rateLimitsFor(policies, principal.rateLimits, facts, workspace, now);
        if (applied.length === 0) return { tokenLimits: [], headers: null };
        return andThen(countRequest(applied, now), (decision) => ({
          tokenLimits: decision.tokenLimits,
          headers: decision.headers,
        }));
      });
    },

    /**
     * Reserves the estimate in every budget that covers the request; USAGE_LIMIT_EXCEEDED when
     * one cannot hold it, or when a cost budget applies and the model has no price (nor a
     * default price is configured). The estimate is only computed when a budget applies.
     */
    reserveBudgets(principal: Principal, facts: RequestFacts, estimate: EstimateOf): MaybePromise<Reservation | null> {
      if (!features.enabled('usage_limits')) return null;
      return andThen(limitSources(facts), ([policies, workspace]) => {
        const budgets = budgetsFor(policies, principal, facts, workspace);
        if (budgets.length === 0) return null;
        const now = deps.clock.now();
        return andThen(estimate(), (bound) => reserveEstimate(reservations, budgets, bound, now));
      });
    },

    /**
     * Settles a request once its response has ended: token limits count the real tokens,
     * reservations become the real cost (or are released when nothing was used).
     */
    settle(admission: Admission, actual: ActualUsage | 'as-reserved' | null): MaybePromise<void> {
      const now = deps.clock.now();
      const reservation = admission.reservation;
      return guarded(() => {
        // settleTokens answers at once when no token limit applies (most requests).
        const counted =
          actual !== null && actual !== 'as-reserved' && actual.tokens
            ? settleTokens(deps.store, admission.tokenLimits, actual.tokens, now)
            : undefined;
        return andThen(counted, () => settleBudgets(reservation, actual, now));
      }, undefined);
    },

    /**
     * The limits of the provider or virtual key an attempt is sent with: an expired one is
     * refused (CREDENTIAL_EXPIRED), its rate limits are counted (RATE_LIMITED with the usual
     * headers) and its budget reserves the estimate (USAGE_LIMIT_EXCEEDED). What it returns is
     * merged into the request's admission once the attempt succeeds, or released if it fails.
     */
    async admitCredential(
      credential: CredentialLimits,
      facts: RequestFacts,
      estimate: EstimateOf,
    ): Promise<Pick<Admission, 'tokenLimits' | 'reservation'>> {
      const now = deps.clock.now();
      if (credential.expiresAt !== null && Date.parse(credential.expiresAt) <= now)
        throw new AppError(
          'CREDENTIAL_EXPIRED',
          `The ${credentialLabel(credential)} expired at ${credential.expiresAt}; set a later expires_at to use it again.`,
        );
      const applied = credentialRateLimits(credential, now);
      const tokenLimits = applied.length > 0 ? (await countRequest(applied, now)).tokenLimits : [];
      if (!credential.usageLimits || !features.enabled('usage_limits')) return { tokenLimits, reservation: null };
      const budgets = applicableBudgets(
        [
          ownBudget(
            credential.kind,
            credential.id,
            `usage limit of the ${credentialLabel(credential)}`,
            credential.name,
            credential.usageLimits,
            credential.createdAt,
            credential.workspaceId,
          ),
        ],
        facts,
      );
      return { tokenLimits, reservation: await reserveEstimate(reservations, budgets, await estimate(), now) };
    },

    /** Gives back what an attempt that failed reserved in its credential's budget. */
    async releaseCredential(admitted: Pick<Admission, 'reservation'>): Promise<void> {
      const reservation = admitted.reservation;
      if (!reservation || reservation.budgets.length === 0) return;
      await guarded(async () => {
        await settle(deps.store, reservation, null, deps.clock.now());
      }, undefined);
    },

    /** Empties one budget bucket of the current period (the admin API's usage reset). */
    async resetBucket(
      scopeType: BudgetSource['scopeType'],
      scopeId: string,
      valueKey: string,
      period: string,
    ): Promise<void> {
      const now = deps.clock.now();
      const key = budgetCounterKey(scopeType, scopeId, valueKey, period);
      const [count] = await deps.store.peek([key], now);
      if (count) await deps.store.add([{ key, amount: -count, expiresAt: now + 24 * 3600 * 1000 }], now);
    },

    invalidate(): void {
      sources.invalidate();
    },
  };
}

export type LimitsService = ReturnType<typeof createLimitsService>;
