import { lazyService } from '../../lib/lazy.js';
import type { Clock } from '../../lib/clock.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Repositories } from '../../storage/repositories/index.js';
import { registerUsageLimitPolicyRoutes } from './routes.js';
import type { BucketResetter, UsageLimitPolicyService } from './service.js';

export type { UsageLimitPolicyService } from './service.js';
export { entityOfBucket, VALUE_KEY_SEPARATOR } from './entities.js';

/** Builds the usage-limits policy service from the repositories and registers its admin routes. */
export function registerUsageLimitPolicies(
  app: ZodApp,
  deps: {
    repos: Pick<Repositories, 'usageLimitPolicies' | 'workspaces' | 'apiKeys'>;
    clock: Clock;
    budgets: BucketResetter;
  },
): UsageLimitPolicyService {
  const service = lazyService(async () =>
    (await import('./service.js')).createUsageLimitPolicyService({
      policies: deps.repos.usageLimitPolicies,
      workspaces: deps.repos.workspaces,
      apiKeys: deps.repos.apiKeys,
      clock: deps.clock,
      budgets: deps.budgets,
    }),
  );
  registerUsageLimitPolicyRoutes(app, service);
  return service;
}
