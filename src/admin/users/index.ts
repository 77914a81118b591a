import { lazyService } from '../../lib/lazy.js';
import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import type { Clock } from '../../lib/clock.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Repositories } from '../../storage/repositories/index.js';
import { registerUserRoutes } from './routes.js';
import type { UserService } from './service.js';

export type { UserService } from './service.js';

/** Builds the users service and registers its admin routes. */
export function registerUsers(
  app: ZodApp,
  deps: { repos: Pick<Repositories, 'users' | 'apiKeys'>; keys: ApiKeyVerifier; clock: Clock },
): UserService {
  const service = lazyService(async () =>
    (await import('./service.js')).createUserService({
      users: deps.repos.users,
      apiKeys: deps.repos.apiKeys,
      verifier: deps.keys,
      clock: deps.clock,
    }),
  );
  registerUserRoutes(app, service);
  return service;
}
