import { ALL_ENABLED, type FeatureFlags } from '../features/flags.js';
import type { Clock } from '../lib/clock.js';
import { createLoadingCache } from '../lib/loading-cache.js';
import type { Repositories } from '../storage/repositories/index.js';
import type { BudgetSource } from './budgets.js';
import { ownBudget } from './budget-sources.js';
import { createPolicySet, NO_POLICIES, type PolicySet } from './policy-set.js';
import type { RateLimitEntry, UsageLimits } from './schemas.js';

/** What the limits read of a workspace: its slug (conditions name workspaces by either) and its own limits. */
export interface WorkspaceInfo {
  slug: string;
  budget: BudgetSource | null;
  rateLimits: RateLimitEntry[];
}

/**
 * Active policies per organisation and workspaces' limits, cached so that admitting a request
 * reads no database; `invalidate` (any change through the admin API, the change bus, a budget
 * reset) drops them at once, and the TTL bounds how stale another instance can be.
 */
export function createLimitSources(deps: {
  features?: FeatureFlags | undefined;
  repos: Pick<Repositories, 'rateLimitPolicies' | 'usageLimitPolicies' | 'workspaces'>;
  clock: Clock;
  cacheTtlMs?: number | undefined;
}) {
  const ttl = deps.cacheTtlMs ?? 5_000;
  const orgs = createLoadingCache<PolicySet>({ clock: deps.clock, ttlMs: ttl });
  const workspaces = createLoadingCache<WorkspaceInfo>({ clock: deps.clock, ttlMs: ttl });
  // POLICY_ENABLED=OFF: policies are neither loaded nor applied (limits of keys and workspaces still are).
  const features: FeatureFlags = deps.features ?? ALL_ENABLED;

  async function loadPolicies(organisationId: string): Promise<PolicySet> {
    const [rateRows, usageRows] = await Promise.all([
      deps.repos.rateLimitPolicies.listActive(organisationId),
      deps.repos.usageLimitPolicies.listActive(organisationId),
    ]);
    return createPolicySet(rateRows, usageRows);
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

  return {
    policiesOf(organisationId: string): Promise<PolicySet> {
      if (!features.enabled('policy')) return Promise.resolve(NO_POLICIES);
      return orgs.get(organisationId, loadPolicies);
    },
    workspaceOf(workspaceId: string): Promise<WorkspaceInfo> {
      return workspaces.get(workspaceId, loadWorkspace);
    },
    /** What policiesOf would answer from memory, without a promise; undefined when it must load. */
    cachedPolicies(organisationId: string): PolicySet | undefined {
      return features.enabled('policy') ? orgs.peek(organisationId) : NO_POLICIES;
    },
    cachedWorkspace(workspaceId: string): WorkspaceInfo | undefined {
      return workspaces.peek(workspaceId);
    },
    invalidate(): void {
      orgs.clear();
      workspaces.clear();
    },
  };
}
