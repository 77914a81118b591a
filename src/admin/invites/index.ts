import { lazyService } from '../../lib/lazy.js';
import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import type { Clock } from '../../lib/clock.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Repositories } from '../../storage/repositories/index.js';
import { registerInviteRoutes } from './routes.js';
import type { InviteService } from './service.js';

export type { InviteService } from './service.js';

/** Builds the invites service and registers its routes, the public accept route among them. */
export function registerInvites(
  app: ZodApp,
  deps: { repos: Pick<Repositories, 'invites' | 'users' | 'workspaces'>; keys: ApiKeyVerifier; clock: Clock },
): InviteService {
  const service = lazyService(async () =>
    (await import('./service.js')).createInviteService({
      invites: deps.repos.invites,
      users: deps.repos.users,
      workspaces: deps.repos.workspaces,
      verifier: deps.keys,
      clock: deps.clock,
    }),
  );
  registerInviteRoutes(app, service);
  return service;
}
