import { lazyService } from '../../lib/lazy.js';
import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import type { Clock } from '../../lib/clock.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Repositories } from '../../storage/repositories/index.js';
import { registerMemberRoutes } from './routes.js';
import type { MemberService } from './service.js';

export type { MemberService } from './service.js';

/** Builds the workspace members service and registers its admin routes. */
export function registerMembers(
  app: ZodApp,
  deps: { repos: Pick<Repositories, 'members' | 'users' | 'workspaces'>; keys: ApiKeyVerifier; clock: Clock },
): MemberService {
  const service = lazyService(async () =>
    (await import('./service.js')).createMemberService({
      members: deps.repos.members,
      users: deps.repos.users,
      workspaces: deps.repos.workspaces,
      verifier: deps.keys,
      clock: deps.clock,
    }),
  );
  registerMemberRoutes(app, service);
  return service;
}
