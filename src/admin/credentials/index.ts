import type { Config } from '../../config/schema.js';
import type { Clock } from '../../lib/clock.js';
import { lazyService } from '../../lib/lazy.js';
import { createSecretBox, loadMasterKey, type SecretBox } from '../../lib/secret-box.js';
import type { Db } from '../../storage/database.js';
import type { Repositories } from '../../storage/repositories/index.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Logger } from '../../telemetry/logger.js';
import { registerIntegrationModelRoutes } from '../integrations/model-routes.js';
import { registerIntegrationRoutes } from '../integrations/routes.js';
import { registerIntegrationWorkspaceRoutes } from '../integrations/workspace-routes.js';
import { registerModelAliasRoutes } from '../model-aliases/routes.js';
import { registerProviderRoutes } from '../providers/routes.js';
import { registerVirtualKeyRoutes } from '../virtual-keys/routes.js';
import { createSecretMappingRules } from '../secret-references/mappings.js';
import { registerSecretReferenceRoutes } from '../secret-references/routes.js';
import type { SecretCache } from '../../secrets/secret-cache.js';
import { createCredentialResolver, type CredentialResolver } from './resolve.js';
import { sealStoredConfigurations } from './seal-stored.js';

export { createCredentialResolver, type CredentialResolver, type ResolvedCredential } from './resolve.js';

/**
 * The secret box (from the master key) and the one credential resolver of a server. The same
 * resolver goes to the admin routes, which invalidate it on every change, and to the gateway.
 */
export function createCredentials(deps: {
  config: Config;
  db: Db;
  clock: Clock;
  /** Values read from secret managers, for fields mapped to secret references. */
  secrets: SecretCache;
  logger?: Logger;
  ttlMs?: number;
}): {
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
    secrets: deps.secrets,
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.ttlMs !== undefined ? { ttlMs: deps.ttlMs } : {}),
  });
  return { secretBox, resolver };
}

/**
 * Integrations (and their models), providers, virtual keys, model aliases and the secret
 * references their fields may be read from: what the gateway resolves. Their services are
 * loaded by the first request to their routes (issue #19).
 */
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
      | 'secretReferences'
    >;
    secretBox: SecretBox;
    credentials: CredentialResolver;
    clock: Clock;
    /** Whether secret references may sign in with the server's own identity (secret_manager_ambient_credentials). */
    ambientCredentials: boolean;
  },
): void {
  const { repos, secretBox, clock } = deps;
  const onChange = () => deps.credentials.invalidateAll();
  const mappings = createSecretMappingRules({ references: repos.secretReferences, workspaces: repos.workspaces });
  // Secret fields stored in clear by older versions are encrypted before the server answers.
  app.addHook('onReady', async () => {
    if ((await sealStoredConfigurations({ stores: [repos.integrations, repos.virtualKeys], secretBox })) > 0)
      onChange();
  });
  registerIntegrationRoutes(
    app,
    lazyService(async () =>
      (await import('../integrations/service.js')).createIntegrationService({
        integrations: repos.integrations,
        access: repos.integrationWorkspaces,
        providers: repos.providers,
        workspaces: repos.workspaces,
        secretBox,
        clock,
        mappings,
        onChange,
      }),
    ),
  );
  registerIntegrationModelRoutes(
    app,
    lazyService(async () =>
      (await import('../integrations/model-service.js')).createIntegrationModelService({
        integrations: repos.integrations,
        models: repos.integrationModels,
        clock,
        onChange,
      }),
    ),
  );
  registerIntegrationWorkspaceRoutes(
    app,
    lazyService(async () =>
      (await import('../integrations/workspace-service.js')).createIntegrationWorkspaceService({
        integrations: repos.integrations,
        access: repos.integrationWorkspaces,
        providers: repos.providers,
        workspaces: repos.workspaces,
        clock,
        onChange,
      }),
    ),
  );
  registerModelAliasRoutes(
    app,
    lazyService(async () =>
      (await import('../model-aliases/service.js')).createModelAliasService({
        aliases: repos.modelAliases,
        workspaces: repos.workspaces,
        configs: repos.configs,
        providers: repos.providers,
        clock,
        onChange,
      }),
    ),
  );
  registerProviderRoutes(
    app,
    lazyService(async () =>
      (await import('../providers/service.js')).createProviderService({
        providers: repos.providers,
        integrations: repos.integrations,
        integrationWorkspaces: repos.integrationWorkspaces,
        workspaces: repos.workspaces,
        clock,
        mappings,
        onChange,
      }),
    ),
  );
  registerVirtualKeyRoutes(
    app,
    lazyService(async () =>
      (await import('../virtual-keys/service.js')).createVirtualKeyService({
        virtualKeys: repos.virtualKeys,
        integrations: repos.integrations,
        workspaces: repos.workspaces,
        secretBox,
        clock,
        mappings,
        onChange,
      }),
    ),
  );
  registerSecretReferenceRoutes(
    app,
    lazyService(async () =>
      (await import('../secret-references/service.js')).createSecretReferenceService({
        references: repos.secretReferences,
        workspaces: repos.workspaces,
        secretBox,
        clock,
        ambientCredentials: deps.ambientCredentials,
        onChange,
      }),
    ),
  );
}
