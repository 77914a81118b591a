import type { Principal } from '../auth/principal.js';
import { AppError } from '../lib/errors.js';
import type { CredentialLookup } from './credential-lookup.js';
import type { Leaf } from './routing/router.js';
import { HEADERS_LEAF } from './routing/router.js';

/** `model: "@<provider slug>/<model>"`: a stored provider chosen by the model name alone. */
export interface ModelRoute {
  slug: string;
  model: string;
}

/** The provider slug and model of `@<slug>/<model>`; null for any other model name. */
export function parseModelRoute(model: unknown): ModelRoute | null {
  if (typeof model !== 'string' || !model.startsWith('@')) return null;
  const slash = model.indexOf('/');
  if (slash < 2 || slash === model.length - 1) return null;
  return { slug: model.slice(1, slash), model: model.slice(slash + 1) };
}

/**
 * Whether the model name may choose the target: only when nothing else does (no provider,
 * virtual key or config header). The key's default config gives way to an explicit model route.
 */
export function modelMayRoute(headers: Record<string, string | string[] | undefined>): boolean {
  return (
    headers['x-service-provider'] === undefined &&
    headers['x-service-virtual-key'] === undefined &&
    headers['x-service-config'] === undefined
  );
}

/**
 * The leaf for a model route: the stored provider, with the model rewritten through the same
 * override_params path a config uses, so the body, budget estimate and log see the bare name.
 */
export function modelRouteLeaf(route: ModelRoute): Leaf {
  return {
    node: { provider: `@${route.slug}` },
    label: 'root',
    settings: { ...HEADERS_LEAF.settings, overrideParams: { model: route.model } },
  };
}

/** What the model name chose: a stored provider (maybe through an alias), or an alias's config. */
export type ModelChoice =
  { kind: 'route'; route: ModelRoute; alias: string | null } | { kind: 'config'; configId: string; alias: string };

/**
 * Reads the target from the model name when nothing else names one: `@slug/model`, or an alias
 * of the workspace or organisation (`default-chat`). Null for any other name, which goes to the
 * key's default config or the headers as before. A key bound to its config (allow_config_override
 * false) cannot be routed elsewhere by its model name.
 */
export async function chooseByModel(
  credentials: Pick<CredentialLookup, 'resolveAlias'>,
  principal: Principal,
  workspaceId: string,
  model: unknown,
): Promise<ModelChoice | null> {
  if (typeof model !== 'string') return null;
  const direct = parseModelRoute(model);
  let choice: ModelChoice | null = direct ? { kind: 'route', route: direct, alias: null } : null;
  if (!choice && !model.startsWith('@') && model.length <= MAX_ALIAS_LENGTH) {
    const alias = await credentials.resolveAlias(principal, workspaceId, model);
    const route = alias?.model ? parseModelRoute(alias.model) : null;
    if (alias && route) choice = { kind: 'route', route, alias: alias.name };
    else if (alias?.configId) choice = { kind: 'config', configId: alias.configId, alias: alias.name };
  }
  if (choice && principal.defaults?.config_id && principal.defaults.allow_config_override === false)
    throw new AppError(
      'CONFIG_OVERRIDE_FORBIDDEN',
      'This API key always uses its default config; a model name cannot route it elsewhere (send a plain model name).',
      { param: 'model' },
    );
  return choice;
}

/** Alias names are at most this long; a longer model name is never looked up. */
export const MAX_ALIAS_LENGTH = 128;
