import type { FeatureFlags } from '../../features/flags.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Clock } from '../../lib/clock.js';
import type { Repositories } from '../../storage/repositories/index.js';
import { createGuardrailUseCheck, type GuardrailUseCheck } from './references.js';
import { registerGuardrailRoutes } from './routes.js';
import { createGuardrailService } from './service.js';

export { createGuardrailUseCheck, type GuardrailUseCheck } from './references.js';

/**
 * Builds the guardrail service and registers its routes. `onChange` runs after every write, so
 * that the gateway's guardrail lookup sees the change at once. Returns the check that configs
 * and workspace defaults run on the guardrails they use.
 */
export function registerGuardrails(
  app: ZodApp,
  deps: {
    repos: Pick<Repositories, 'guardrails' | 'workspaces'>;
    clock: Clock;
    features: FeatureFlags;
    onChange?: () => void;
  },
): GuardrailUseCheck {
  const service = createGuardrailService({
    guardrails: deps.repos.guardrails,
    workspaces: deps.repos.workspaces,
    clock: deps.clock,
  });
  const onChange = deps.onChange;
  registerGuardrailRoutes(
    app,
    onChange
      ? {
          ...service,
          create: async (...args) => after(await service.create(...args), onChange),
          update: async (...args) => after(await service.update(...args), onChange),
          archive: async (...args) => after(await service.archive(...args), onChange),
        }
      : service,
  );
  return createGuardrailUseCheck({ guardrails: deps.repos.guardrails, features: deps.features });
}

function after<T>(result: T, onChange: () => void): T {
  onChange();
  return result;
}
