import type { Principal } from '../auth/principal.js';
import { ALL_ENABLED, type FeatureFlags } from '../features/flags.js';
import type { Clock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { createLoadingCache } from '../lib/loading-cache.js';
import type { Repositories } from '../storage/repositories/index.js';
import type { UsageLimitPoliciesTable } from '../storage/schema.js';
import type { Logger } from '../telemetry/logger.js';
import type { ModelPrice } from '../pricing/pricing-service.js';
import {
  applicableBudgets,
  budgetCounterKey,
  reserve,
  settle,
  type ActualUsage,
  type Budget,
  type BudgetSource,
  type Estimate,
  type Reservation,
} from './budgets.js';
import { costOfTokens } from './estimate.js';
import type { CounterStore } from './counter-store.js';
import { credentialLabel, type CredentialLimits } from './credential-limits.js';
import type { DeploymentLimits } from './deployment-limits.js';
import type { RequestFacts } from './matching.js';
import { periodStart } from './periods.js';
import {
  applicableRateLimits,
  checkRateLimits,
  credentialRateLimits,
  settleTokens,
  type AppliedRateLimit,
  type ParsedRatePolicy,
  type RateHeaders,
} from './rate-limiter.js';
import type { RateLimitEntry, UsageLimits } from './schemas.js';
import type { UsageRecorder } from './usage-recorder.js';

interface OrgPolicies {
  rate: ParsedRatePolicy[];
  usage: BudgetSource[];
}

interface WorkspaceInfo {
  slug: string;
  budget: BudgetSource | null;
  rateLimits: RateLimitEntry[];
}

/** What the gateway keeps between admitting a request and settling it. */
export interface Admission {
  tokenLimits: AppliedRateLimit[];
  reservation: Reservation | null;
  headers: RateHeaders | null;
}

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

/**
 * Rate limits and budgets of gateway traffic. Active policies are cached per organisation so
 * that admitting a request reads no database; any change made through the admin API clears
 * the cache at once (`invalidate`), and the TTL bounds how stale another instance can be.
 */
export function createLimitsService(deps: LimitsDeps) {
  const ttl = deps.cacheTtlMs ?? 5_000;
  const orgs = createLoadingCache<OrgPolicies>({ clock: deps.clock, ttlMs: ttl });
  const workspaces = createLoadingCache<WorkspaceInfo>({ clock: deps.clock, ttlMs: ttl });
  // POLICY_ENABLED=OFF: policies are neither loaded nor applied (limits of keys and workspaces still are);
  // USAGE_LIMITS_ENABLED=OFF: no budget of any kind is checked or counted.
  const features: FeatureFlags = deps.features ?? ALL_ENABLED;
  const NO_POLICIES: OrgPolicies = { rate: [], usage: [] };

  function policiesOf(organisationId: string): Promise<OrgPolicies> {
    if (!features.enabled('policy')) return Promise.resolve(NO_POLICIES);
    return orgs.get(organisationId, () => loadPolicies(organisationId));
  }

  async function loadPolicies(organisationId: string): Promise<OrgPolicies> {
    const [rateRows, usageRows] = await Promise.all([
      deps.repos.rateLimitPolicies.listActive(organisationId),
      deps.repos.usageLimitPolicies.listActive(organisationId),
    ]);
    return {
      rate: rateRows.map((row) => ({
        row,
        conditions: JSON.parse(row.conditions) as ParsedRatePolicy['conditions'],
        groupBy: JSON.parse(row.group_by) as ParsedRatePolicy['groupBy'],
      })),
      usage: usageRows.map(policyBudget),
    };
  }

  function workspaceOf(workspaceId: string): Promise<WorkspaceInfo> {
    return workspaces.get(workspaceId, () => loadWorkspace(workspaceId));
  }

  async function loadWorkspace(workspaceId: string): Promise<WorkspaceInfo> {
    const row = await deps.repos.workspaces.findById(workspaceId);
    if (!row) throw new Error(`workspace ${workspaceId} not found`);
    const limits =
      row.usage_limits === null
        ? null
        : (JSON.parse(row.usage_limits) as UsageLimits & { last_reset_at?: string | null });
    return {
      slug: row.slug,
      rateLimits: row.rate_limits === null ? [] : (JSON.parse(row.rate_limits) as RateLimitEntry[]),
      budget: limits
        ? ownBudget(
            'workspace',
            workspaceId,
            `usage limit of workspace ${row.slug}`,
            row.slug,
            limits,
            row.created_at,
            workspaceId,
          )
        : null,
    };
  }

  /** Store failures follow `limits_on_store_failure`: refuse (503) or let the request through unlimited. */
  async function guarded<T>(work: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) throw error;
      deps.logger.error({ err: error, failOpen: deps.failOpen }, 'limit counter store failed');
      if (deps.failOpen) return fallback;
      throw new AppError('LIMITS_UNAVAILABLE', 'Limits cannot be checked right now; try again shortly.', {
        cause: error,
      });
    }
  }

  return {
    /** Facts about the request that conditions and group-by read, and the deployment that serves it. */
    async facts(
      principal: Principal,
      workspaceId: string,
      endpointType: string,
      metadata: Record<string, string> | null,
      deployment?: DeploymentLimits,
    ): Promise<RequestFacts> {
      const { slug } = await workspaceOf(workspaceId);
      return {
        organisationId: principal.organisationId,
        workspaceId,
        workspaceSlug: slug,
        apiKeyId: principal.keyId,
        endpointType,
        metadata,
        ...(deployment ? { deployment } : {}),
      };
    },

    /** Checks and counts rate limits; throws RATE_LIMITED (with the headers to send) when one is reached. */
    async admitRate(principal: Principal, facts: RequestFacts): Promise<Pick<Admission, 'tokenLimits' | 'headers'>> {
      const now = deps.clock.now();
      const { rate } = await policiesOf(facts.organisationId);
      const { rateLimits } = await workspaceOf(facts.workspaceId);
      const applied = applicableRateLimits(rate, principal.rateLimits, facts, now, facts.deployment ?? null, {
        id: facts.workspaceId,
        slug: facts.workspaceSlug,
        rateLimits,
      });
      if (applied.length === 0) return { tokenLimits: [], headers: null };
      const decision = await guarded(() => checkRateLimits(deps.store, applied, now), {
        allowed: true as const,
        tokenLimits: [],
        headers: null,
      });
      if (!decision.allowed) throw new RateLimitedError(decision.limit, decision.headers, now);
      return { tokenLimits: decision.tokenLimits, headers: decision.headers };
    },

    /**
     * Reserves the estimate in every budget that covers the request; USAGE_LIMIT_EXCEEDED when
     * one cannot hold it, or when a cost budget applies and the model has no price (nor a
     * default price is configured). The estimate is only computed when a budget applies.
     */
    async reserveBudgets(
      principal: Principal,
      facts: RequestFacts,
      estimate: () => Promise<Estimate>,
    ): Promise<Reservation | null> {
      if (!features.enabled('usage_limits')) return null;
      const { usage } = await policiesOf(facts.organisationId);
      const own = principal.usageLimits
        ? [
            {
              ...ownBudget(
                'api_key',
                principal.keyId,
                'usage limit of the API key',
                principal.keyName,
                principal.usageLimits,
                principal.keyCreatedAt,
                facts.workspaceId,
              ),
              ...(principal.alertEmails ? { alsoTo: principal.alertEmails } : {}),
            },
          ]
        : [];
      const workspace = (await workspaceOf(facts.workspaceId)).budget;
      // A deployment's budget alerts the organisation's administrators, not the request's workspace.
      const deployment = facts.deployment;
      const deploymentBudget = deployment?.usageLimits
        ? [
            ownBudget(
              'deployment',
              deployment.id,
              `usage limit of deployment ${deployment.slug}`,
              deployment.slug,
              deployment.usageLimits,
              deployment.createdAt,
              null,
            ),
          ]
        : [];
      const budgets = applicableBudgets(
        [...usage, ...own, ...(workspace ? [workspace] : []), ...deploymentBudget],
        facts,
      );
      if (budgets.length === 0) return null;
      const now = deps.clock.now();
      let estimated = await estimate();
      let defaultPrice: ModelPrice | undefined;
      const costBudget = budgets.find((budget) => budget.type === 'cost');
      if (estimated.cost === null && costBudget) {
        if (!deps.defaultPrice)
          throw new AppError(
            'USAGE_LIMIT_EXCEEDED',
            `The ${costBudget.label} is a cost budget and this request's model has no price, so its cost cannot be bounded; add a price for the model or set default_model_price.`,
          );
        defaultPrice = deps.defaultPrice;
        estimated = {
          ...estimated,
          cost: costOfTokens(defaultPrice, estimated.promptTokens, estimated.completionTokens),
        };
      }
      const result = await guarded(() => reserve(deps.store, budgets, estimated, now, defaultPrice), {
        ok: true as const,
        reservation: { budgets: [], amounts: [] },
      });
      if (!result.ok)
        throw new AppError('USAGE_LIMIT_EXCEEDED', refusal(result.budget, result.used, result.needed, estimated));
      return result.reservation;
    },

    /**
     * Settles a request once its response has ended: token limits count the real tokens,
     * reservations become the real cost (or are released when nothing was used).
     */
    async settle(admission: Admission, actual: ActualUsage | 'as-reserved' | null): Promise<void> {
      const now = deps.clock.now();
      const reservation = admission.reservation;
      await guarded(async () => {
        if (actual !== null && actual !== 'as-reserved' && actual.tokens)
          await settleTokens(deps.store, admission.tokenLimits, actual.tokens, now);
        if (!reservation || reservation.budgets.length === 0) return;
        // A response whose usage never arrived (a client that left mid-stream) keeps its estimate.
        const amounts =
          actual === 'as-reserved' ? reservation.amounts : await settle(deps.store, reservation, actual, now);
        reservation.budgets.forEach((budget, i) => deps.recorder.record(budget, amounts[i]!));
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
      estimate: () => Promise<Estimate>,
    ): Promise<Pick<Admission, 'tokenLimits' | 'reservation'>> {
      const now = deps.clock.now();
      if (credential.expiresAt !== null && Date.parse(credential.expiresAt) <= now)
        throw new AppError(
          'CREDENTIAL_EXPIRED',
          `The ${credentialLabel(credential)} expired at ${credential.expiresAt}; set a later expires_at to use it again.`,
        );
      const applied = credentialRateLimits(credential, now);
      let tokenLimits: AppliedRateLimit[] = [];
      if (applied.length > 0) {
        const decision = await guarded(() => checkRateLimits(deps.store, applied, now), {
          allowed: true as const,
          tokenLimits: [],
          headers: null,
        });
        if (!decision.allowed) throw new RateLimitedError(decision.limit, decision.headers, now);
        tokenLimits = decision.tokenLimits;
      }
      if (!credential.usageLimits || !features.enabled('usage_limits')) return { tokenLimits, reservation: null };
      const [budget] = applicableBudgets(
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
      let estimated = await estimate();
      let defaultPrice: ModelPrice | undefined;
      if (estimated.cost === null && budget!.type === 'cost') {
        if (!deps.defaultPrice)
          throw new AppError(
            'USAGE_LIMIT_EXCEEDED',
            `The ${budget!.label} is a cost budget and this request's model has no price, so its cost cannot be bounded; add a price for the model or set default_model_price.`,
          );
        defaultPrice = deps.defaultPrice;
        estimated = {
          ...estimated,
          cost: costOfTokens(defaultPrice, estimated.promptTokens, estimated.completionTokens),
        };
      }
      const result = await guarded(() => reserve(deps.store, [budget!], estimated, now, defaultPrice), {
        ok: true as const,
        reservation: { budgets: [], amounts: [] },
      });
      if (!result.ok)
        throw new AppError('USAGE_LIMIT_EXCEEDED', refusal(result.budget, result.used, result.needed, estimated));
      return { tokenLimits, reservation: result.reservation };
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
      orgs.clear();
      workspaces.clear();
    },
  };
}

export type LimitsService = ReturnType<typeof createLimitsService>;

/** Adds what a credential's limits admitted to the request's admission, so that the request's settlement covers them. */
export function mergeAdmission(admission: Admission, own: Pick<Admission, 'tokenLimits' | 'reservation'>): void {
  admission.tokenLimits = [...admission.tokenLimits, ...own.tokenLimits];
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

/** A 429 that carries the headers a rate-limited client needs. */
export class RateLimitedError extends AppError {
  readonly headers: Record<string, string>;

  constructor(limit: AppliedRateLimit, headers: RateHeaders, now: number) {
    super(
      'RATE_LIMITED',
      `Rate limit reached: ${limit.label} allows ${limit.value} ${limit.type}; retry after the window resets.`,
    );
    const resetSeconds = Math.max(1, Math.ceil((headers.resetAt - now) / 1000));
    this.headers = {
      'retry-after': String(resetSeconds),
      'x-ratelimit-limit': String(headers.limit),
      'x-ratelimit-remaining': String(headers.remaining),
      'x-ratelimit-reset': String(resetSeconds),
    };
  }
}

export function rateHeaders(headers: RateHeaders, now: number): Record<string, string> {
  return {
    'x-ratelimit-limit': String(headers.limit),
    'x-ratelimit-remaining': String(headers.remaining),
    'x-ratelimit-reset': String(Math.max(0, Math.ceil((headers.resetAt - now) / 1000))),
  };
}

function policyBudget(row: UsageLimitPoliciesTable): BudgetSource {
  return {
    scopeType: 'policy',
    scopeId: row.id,
    label: `usage limits policy ${row.name ? `"${row.name}" ` : ''}(${row.id})`,
    name: row.name ?? row.id,
    type: row.type,
    creditLimit: row.credit_limit,
    alertThreshold: row.alert_threshold,
    periodStart: periodStart(row),
    resetAt: row.next_usage_reset_at ? Date.parse(row.next_usage_reset_at) : null,
    workspaceId: row.workspace_id,
    conditions: JSON.parse(row.conditions) as BudgetSource['conditions'],
    groupBy: JSON.parse(row.group_by) as BudgetSource['groupBy'],
  };
}

function ownBudget(
  scopeType: 'api_key' | 'workspace' | 'deployment' | 'provider' | 'virtual_key',
  scopeId: string,
  label: string,
  name: string,
  limits: UsageLimits & { last_reset_at?: string | null },
  createdAt: string,
  workspaceId: string | null,
): BudgetSource {
  return {
    scopeType,
    scopeId,
    label,
    name,
    type: limits.type,
    creditLimit: limits.credit_limit,
    alertThreshold: limits.alert_threshold ?? null,
    periodStart: limits.last_reset_at ?? createdAt,
    resetAt: limits.next_usage_reset_at ? Date.parse(limits.next_usage_reset_at) : null,
    workspaceId,
  };
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
