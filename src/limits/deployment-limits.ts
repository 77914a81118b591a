import type { RateLimitEntry, UsageLimits } from './schemas.js';

/**
 * The limits of the deployment whose instance serves a request (docs/deployments.md): its own
 * counters, shared by all its instances through the counter store, whatever the key or workspace.
 */
export interface DeploymentLimits {
  id: string;
  slug: string;
  rateLimits: readonly RateLimitEntry[] | null;
  usageLimits: (UsageLimits & { last_reset_at?: string | null }) | null;
  createdAt: string;
}
