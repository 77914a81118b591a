import { lazyService } from '../../lib/lazy.js';
import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import type { UserStatusEvents } from '../../auth/user-status.js';
import type { Clock } from '../../lib/clock.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Repositories } from '../../storage/repositories/index.js';
import { registerScimAdminRoutes } from './admin-routes.js';
import { registerScimProtocolRoutes } from './protocol-routes.js';
import { createScimTokenService } from './tokens-service.js';

export interface ScimDeps {
  repos: Repositories;
  keys: Pick<ApiKeyVerifier, 'invalidateAll'>;
  clock: Clock;
  userStatus: UserStatusEvents;
  /** SCIM_MEMBERSHIP_USER_MODE: group membership through the Users endpoint. */
  userMode: boolean;
}

/**
 * Builds SCIM provisioning and registers its admin routes (tokens, mappings) on `app`. The
 * protocol routes go in a scope of their own, whose errors are answered in the SCIM error
 * schema: the server makes it and hands it to the returned function.
 */
export function registerScim(app: ZodApp, deps: ScimDeps): { registerProtocolRoutes(scope: ZodApp): void } {
  const { repos, clock } = deps;
  const now = () => new Date(clock.now()).toISOString();
  const sync = lazyService(async () =>
    (await import('./membership-sync.js')).createMembershipSync({
      groups: repos.scimGroups,
      mappings: repos.scimMappings,
      members: repos.members,
      verifier: deps.keys,
      now,
    }),
  );
  registerScimAdminRoutes(app, {
    tokens: createScimTokenService({ tokens: repos.scimTokens, clock }),
    mappings: lazyService(async () =>
      (await import('./mappings-service.js')).createScimMappingService({
        mappings: repos.scimMappings,
        groups: repos.scimGroups,
        workspaces: repos.workspaces,
        sync,
        clock,
      }),
    ),
  });
  const services = {
    users: lazyService(async () =>
      (await import('./users-service.js')).createScimUserService({
        scimUsers: repos.scimUsers,
        users: repos.users,
        groups: repos.scimGroups,
        apiKeys: repos.apiKeys,
        sync,
        verifier: deps.keys,
        userStatus: deps.userStatus,
        clock,
        userMode: deps.userMode,
      }),
    ),
    groups: lazyService(async () =>
      (await import('./groups-service.js')).createScimGroupService({
        groups: repos.scimGroups,
        scimUsers: repos.scimUsers,
        mappings: repos.scimMappings,
        sync,
        clock,
        userMode: deps.userMode,
      }),
    ),
  };
  return { registerProtocolRoutes: (scope) => registerScimProtocolRoutes(scope, services) };
}
