import type { Config } from '../../config/schema.js';
import type { Clock } from '../../lib/clock.js';
import { createSecretBox, loadMasterKey, type SecretBox } from '../../lib/secret-box.js';
import type { Db } from '../../storage/database.js';
import type { Repositories } from '../../storage/repositories/index.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Logger } from '../../telemetry/logger.js';
import { registerIntegrationModelRoutes } from '../integrations/model-routes.js';
import { createIntegrationModelService } from '../integrations/model-service.js';
import { registerIntegrationRoutes } from '../integrations/routes.js';
import { registerIntegrationWorkspaceRoutes } from '../integrations/workspace-routes.js';
import { createIntegrationWorkspaceService } from '../integrations/workspace-service.js';
import { registerModelAliasRoutes } from '../model-aliases/routes.js';
import { createModelAliasService } from '../model-aliases/service.js';
import { createIntegrationService } from '../integrations/service.js';
import { registerProviderRoutes } from '../providers/routes.js';
import { createProviderService } from '../providers/service.js';
import { registerVirtualKeyRoutes } from '../virtual-keys/routes.js';
import { createVirtualKeyService } from '../virtual-keys/service.js';
import { createCredentialResolver, type CredentialResolver } from './resolve.js';
import { sealStoredConfigurations } from './seal-stored.js';

export { createCredentialResolver, type CredentialResolver, type ResolvedCredential } from './resolve.js';

/**
 * The secret box (from the master key) and the one credential resolver of a server. The same
 * resolver goes to the admin routes, which invalidate it on every change, and to the gateway.
 */
export function createCredentials(deps: { config: Config; db: Db; clock: Clock; logger?: Logger; ttlMs?: number }): {
  secretBox: SecretBox;
  resolver: CredentialResolver;
} {
  const masterKey = loadMasterKey(deps.config, {
    onGenerated: (path) =>
      deps.logger?.warn(
        { path },
        'generated the master key that encrypts provider credentials; back it up (without it they cannot be decrypted), or set SVCGW_MASTER_KEY',
      ),
  });
  const secretBox = createSecretBox(masterKey);
  const resolver = createCredentialResolver({
    db: deps.db,
    secretBox,
    clock: deps.clock,
    ...(deps.ttlMs !== undefined ? { ttlMs: deps.ttlMs } : {}),
  });
  return { secretBox, resolver };
}

/** Integrations (and their models), providers, virtual keys and model aliases: what the gateway resolves. */
export function registerCredentialRoutes(
  app: ZodApp,
  deps: {
    repos: Pick<
      Repositories,
      | 'integrations'
      | 'integrationWorkspaces'
      | 'providers'
      | 'virtualKeys'
      | 'workspaces'
      | 'integrationModels'
      | 'modelAliases'
      | 'configs'
    >;
    secretBox: SecretBox;
    credentials: CredentialResolver;
    clock: Clock;
  },
): void {
  const { repos, secretBox, clock } = deps;
  const onChange = () => deps.credentials.invalidateAll();
  // Secret fields stored in clear by older versions are encrypted before the server answers.
  app.addHook('onReady', async () => {
    if ((await sealStoredConfigurations({ stores: [repos.integrations, repos.virtualKeys], secretBox })) > 0)
      onChange();
  });
  registerIntegrationRoutes(
    app,
    createIntegrationService({
      integrations: repos.integrations,
      providers: repos.providers,
      workspaces: repos.workspaces,
      secretBox,
      clock,
      onChange,
    }),
  );
  registerIntegrationModelRoutes(
    app,
    createIntegrationModelService({
      integrations: repos.integrations,
      models: repos.integrationModels,
      clock,
      onChange,
    }),
  );
  registerIntegrationWorkspaceRoutes(
    app,
    createIntegrationWorkspaceService({
      integrations: repos.integrations,
      access: repos.integrationWorkspaces,
      providers: repos.providers,
      workspaces: repos.workspaces,
      clock,
      onChange,
    }),
  );
  registerModelAliasRoutes(
    app,
    createModelAliasService({
      aliases: repos.modelAliases,
      workspaces: repos.workspaces,
      configs: repos.configs,
      providers: repos.providers,
      clock,
      onChange,
    }),
  );
  registerProviderRoutes(
    app,
    createProviderService({
      providers: repos.providers,
      integrations: repos.integrations,
      integrationWorkspaces: repos.integrationWorkspaces,
      workspaces: repos.workspaces,
      clock,
      onChange,
    }),
  );
  registerVirtualKeyRoutes(
    app,
    createVirtualKeyService({
      virtualKeys: repos.virtualKeys,
      integrations: repos.integrations,
      workspaces: repos.workspaces,
      secretBox,
      clock,
      onChange,
    }),
  );
}
