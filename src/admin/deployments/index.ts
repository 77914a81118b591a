import { lazyService } from '../../lib/lazy.js';
import type { Config } from '../../config/schema.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Clock } from '../../lib/clock.js';
import type { DeploymentRepository } from '../../storage/repositories/deployments.js';
import type { Repositories } from '../../storage/repositories/index.js';
import { registerDeploymentRoutes } from './routes.js';
import type { DeploymentService } from './service.js';

export type { DeploymentService } from './service.js';

/**
 * Builds the deployment service and registers its admin routes. `onChange` runs after every
 * write, so that the instances serving the deployment apply the change at once.
 */
export function registerDeployments(
  app: ZodApp,
  deps: {
    repos: Pick<Repositories, 'deployments' | 'configs' | 'workspaces' | 'usageCounters'>;
    clock: Clock;
    settings: Pick<Config, 'min_gateway_version'>;
    onChange: () => void;
  },
): DeploymentService {
  const service = lazyService(async () =>
    (await import('./service.js')).createDeploymentService({
      deployments: notifyingWrites(deps.repos.deployments, deps.onChange),
      configs: deps.repos.configs,
      workspaces: deps.repos.workspaces,
      usage: deps.repos.usageCounters,
      clock: deps.clock,
      settings: deps.settings,
    }),
  );
  registerDeploymentRoutes(app, service);
  return service;
}

function notifyingWrites(repo: DeploymentRepository, onChange: () => void): DeploymentRepository {
  const after =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const result = await write(...args);
      onChange();
      return result;
    };
  return { ...repo, insert: after(repo.insert), update: after(repo.update) };
}
