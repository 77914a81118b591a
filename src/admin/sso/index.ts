import { lazyService } from '../../lib/lazy.js';
import { createSessionVerifier, type SessionVerifier } from '../../auth/sessions/session-verifier.js';
import { createOidcClient } from '../../auth/sso/oidc.js';
import { createSamlServiceProvider } from '../../auth/sso/saml.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Repositories } from '../../storage/repositories/index.js';
import type { Logger } from '../../telemetry/logger.js';
import { registerSessionRoutes } from '../sessions/routes.js';
import { registerLoginRoutes, registerSamlAcsRoute, type PublicBase } from './login-routes.js';
import { createProvisioner } from './provision.js';
import { sessionScopes } from './session-scopes.js';
import { createSsoSettings } from './settings-service.js';
import { registerSsoSettingsRoutes } from './settings-routes.js';

/** The session verifier the auth hook uses: sessions act with the scopes of sessionScopes. */
export function createSessions(deps: { repos: Pick<Repositories, 'sessions'>; clock: Clock }): SessionVerifier {
  return createSessionVerifier({ repo: deps.repos.sessions, clock: deps.clock, scopes: sessionScopes });
}

/**
 * Single sign-on (settings, the login flow) and sessions (listing, revoking, logging out,
 * max_session_ttl). `publicUrl` is the public_url setting; without it callback URLs are built
 * from each request's own address.
 */
export async function registerSso(
  app: ZodApp,
  deps: {
    repos: Repositories;
    secretBox: SecretBox;
    clock: Clock;
    logger: Logger;
    publicUrl: string | undefined;
    customScopes: readonly string[];
  },
): Promise<void> {
  const { repos, clock } = deps;
  const base: PublicBase = (request) => deps.publicUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${request.host}`;
  const oidc = createOidcClient({ extraScopes: deps.customScopes });
  const settings = createSsoSettings({
    repo: repos.sso,
    workspaces: repos.workspaces,
    secretBox: deps.secretBox,
    clock,
    extraScopes: deps.customScopes,
    onChange: () => oidc.forget(),
  });
  const login = lazyService(async () =>
    (await import('./login-service.js')).createLoginService({
      sso: repos.sso,
      sessions: repos.sessions,
      users: repos.users,
      workspaces: repos.workspaces,
      settings,
      provisioner: createProvisioner({
        users: repos.users,
        invites: repos.invites,
        workspaces: repos.workspaces,
        sso: repos.sso,
        clock,
      }),
      oidc,
      saml: createSamlServiceProvider(),
      secretBox: deps.secretBox,
      clock,
      // No principal, so no audit record: the refusal goes to the log (the message holds no secret).
      onRefused: (attempt, error) =>
        deps.logger.warn(
          { protocol: attempt.protocol, code: error.code, reason: error.message },
          'single sign-on refused',
        ),
    }),
  );
  registerSsoSettingsRoutes(app, { settings, base });
  registerLoginRoutes(app, { login, base });
  await registerSamlAcsRoute(app, login);
  registerSessionRoutes(
    app,
    lazyService(async () =>
      (await import('../sessions/service.js')).createSessionService({
        sessions: repos.sessions,
        sso: repos.sso,
        clock,
      }),
    ),
  );
}
