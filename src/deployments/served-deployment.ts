import type { Clock } from '../lib/clock.js';
import { createLoadingCache } from '../lib/loading-cache.js';
import type { DeploymentLimits } from '../limits/deployment-limits.js';
import type { RateLimitEntry, UsageLimits } from '../limits/schemas.js';
import type { DeploymentRepository, DeploymentRow } from '../storage/repositories/deployments.js';
import type { DeploymentType } from '../storage/schema.js';

/** What the gateway applies to the traffic of an instance that serves a deployment. */
export interface ServedDeployment {
  id: string;
  slug: string;
  organisationId: string;
  type: DeploymentType;
  /** The config for requests that name none (docs/deployments.md has the order); null: none. */
  configId: string | null;
  /** The workspaces whose requests it serves; null: every workspace. */
  allowedWorkspaces: ReadonlySet<string> | null;
  limits: DeploymentLimits;
}

export interface ServedDeploymentLookup {
  current(): Promise<ServedDeployment>;
  /** After a change to deployments or a budget reset: the next request reads it again. */
  invalidate(): void;
}

const TTL_MS = 5_000;

/**
 * The deployment this instance serves, read once and kept in memory (cleared through the change
 * bus, else after a few seconds), so that the hot path reads no database for it.
 */
export function createServedDeploymentLookup(deps: {
  repo: DeploymentRepository;
  clock: Clock;
  deploymentId: string;
  ttlMs?: number;
}): ServedDeploymentLookup {
  const cache = createLoadingCache<ServedDeployment>({ clock: deps.clock, ttlMs: deps.ttlMs ?? TTL_MS });
  const load = async () => {
    const row = await deps.repo.findByIdAnywhere(deps.deploymentId);
    if (!row) throw new Error(`deployment ${deps.deploymentId} not found`);
    return servedDeployment(row);
  };
  return {
    current: () => cache.get(deps.deploymentId, load),
    invalidate: () => cache.clear(),
  };
}

export function servedDeployment(row: DeploymentRow): ServedDeployment {
  return {
    id: row.id,
    slug: row.slug,
    organisationId: row.organisation_id,
    type: row.type,
    configId: row.config_id,
    allowedWorkspaces: row.allowed_workspaces === null ? null : new Set(JSON.parse(row.allowed_workspaces) as string[]),
    limits: {
      id: row.id,
      slug: row.slug,
      rateLimits: row.rate_limits === null ? null : (JSON.parse(row.rate_limits) as RateLimitEntry[]),
      usageLimits:
        row.usage_limits === null
          ? null
          : (JSON.parse(row.usage_limits) as UsageLimits & { last_reset_at?: string | null }),
      createdAt: row.created_at,
    },
  };
}
