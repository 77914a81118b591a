import { lazyService } from '../../lib/lazy.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Clock } from '../../lib/clock.js';
import type { PromptLookup } from '../../prompts/index.js';
import type { Repositories } from '../../storage/repositories/index.js';
import { registerCatalogRoutes } from './catalog-routes.js';
import { createPromptContext, type PromptAccessSettings } from './context.js';
import { registerPartialRoutes } from './partial-routes.js';
import { registerPromptRoutes } from './prompt-routes.js';

export type { PromptAccessSettings } from './context.js';

/**
 * The prompts family of the control plane: prompts, partials, collections and labels, sharing
 * one context (security-settings checks, default collections, universal labels). Rendering and
 * running prompts are gateway routes (gateway/prompt-run.ts).
 */
export function registerPrompts(
  app: ZodApp,
  deps: {
    repos: Pick<Repositories, 'prompts' | 'workspaces' | 'configs'>;
    lookup: PromptLookup;
    settings: PromptAccessSettings;
    clock: Clock;
  },
): void {
  const promptDeps = {
    repo: deps.repos.prompts,
    workspaces: deps.repos.workspaces,
    configs: deps.repos.configs,
    lookup: deps.lookup,
    settings: deps.settings,
    clock: deps.clock,
  };
  const ctx = createPromptContext(promptDeps);
  // The static /v1/prompts/partials routes are registered first; they would win anyway.
  registerPartialRoutes(
    app,
    lazyService(async () => (await import('./partial-service.js')).createPartialService(promptDeps, ctx)),
  );
  registerPromptRoutes(
    app,
    lazyService(async () => (await import('./prompt-service.js')).createPromptService(promptDeps, ctx)),
  );
  registerCatalogRoutes(app, {
    collections: lazyService(async () =>
      (await import('./collection-service.js')).createCollectionService(promptDeps, ctx),
    ),
    labels: lazyService(async () => (await import('./label-service.js')).createLabelService(promptDeps, ctx)),
  });
}
