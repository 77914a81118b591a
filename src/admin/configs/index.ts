import type { Clock } from '../../lib/clock.js';
import type { ZodApp } from '../../server/zod-app.js';
import type { Repositories } from '../../storage/repositories/index.js';
import { registerConfigRoutes } from './routes.js';
import { createConfigService, type ConfigService } from './service.js';

export { createConfigService, validateConfig, type ConfigService } from './service.js';

/** Builds the config service from the repositories and registers its admin routes. */
export function registerConfigs(app: ZodApp, deps: { repos: Pick<Repositories, 'configs' | 'workspaces'>; clock: Clock }): ConfigService {
  const service = createConfigService({ configs: deps.repos.configs, workspaces: deps.repos.workspaces, clock: deps.clock });
  registerConfigRoutes(app, service);
  return service;
}
