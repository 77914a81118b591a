import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../telemetry/logger.js';
import { createJwksCache } from '../auth/jwt/jwks-cache.js';
import { createJwtAuthenticator, type JwtAuthenticator } from '../auth/jwt/jwt-authenticator.js';
import type { Repositories } from '../storage/repositories/index.js';

/** JWT authentication over the server's own tables, its key sets fetched on the server's clock. */
export function createJwtAuthenticatorFor(
  deps: { config: Config; clock: Clock; logger: Logger },
  repos: Repositories,
): JwtAuthenticator {
  return createJwtAuthenticator({
    directory: {
      settings: repos.jwtSettings,
      findWorkspace: repos.workspaces.findByIdOrSlug,
      findUserById: repos.users.findById,
      findUserByEmail: repos.users.findByEmail,
      findMemberRole: async (workspaceId, userId) =>
        (await repos.workspaces.findMember(workspaceId, userId))?.role ?? null,
    },
    jwks: createJwksCache({
      clock: deps.clock,
      onStale: (url, reason) => {
        const { origin, pathname } = new URL(url); // the query is left out of logs
        deps.logger.warn(
          { jwks_url: `${origin}${pathname}`, reason },
          'JWKS refresh failed; using the keys fetched before',
        );
      },
    }),
    clock: deps.clock,
    cacheTtlMs: deps.config.key_cache_ttl_ms,
  });
}
