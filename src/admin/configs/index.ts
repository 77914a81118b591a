import { lazyService } from '../../lib/lazy.js';
import type { Clock } from '../../lib/clock.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { ConfigRepository } from '../../storage/repositories/configs.js';
import type { Repositories } from '../../storage/repositories/index.js';
import type { GuardrailUseCheck } from '../guardrails/references.js';
import { registerConfigRoutes } from './routes.js';
import type { ConfigService } from './service.js';

export type { ConfigService } from './service.js';

/**
 * Builds the config service from the repositories and registers its admin routes. `onChange`
 * runs after every write, so that the gateway's cache of configs sees the change at once.
 */
export function registerConfigs(
  app: ZodApp,
  deps: {
    repos: Pick<Repositories, 'configs' | 'workspaces'>;
    clock: Clock;
    onChange?: () => void;
    checkGuardrails?: GuardrailUseCheck;
  },
): ConfigService {
  const configs = deps.onChange ? notifyingWrites(deps.repos.configs, deps.onChange) : deps.repos.configs;
  const service = lazyService(async () =>
    (await import('./service.js')).createConfigService({
      configs,
      workspaces: deps.repos.workspaces,
      clock: deps.clock,
      ...(deps.checkGuardrails ? { checkGuardrails: deps.checkGuardrails } : {}),
    }),
  );
  registerConfigRoutes(app, service);
  return service;
}

function notifyingWrites(repo: ConfigRepository, onChange: () => void): ConfigRepository {
  const after =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const result = await write(...args);
      onChange();
      return result;
    };
  return { ...repo, insert: after(repo.insert), update: after(repo.update), addVersion: after(repo.addVersion) };
}
