import type { Principal } from '../auth/principal.js';
import { AppError } from '../lib/errors.js';
import type { ModelPolicy } from './credential-lookup.js';

/**
 * Which models a request may reach. Three lists can say no, and each must say yes:
 * - the provider's catalogue (its integration's `/models`: `allow_all_models` and enabled entries);
 * - the API key's `defaults.allowed_models`;
 * - its workspace's `defaults.allowed_models`.
 * A key or workspace pattern is a name, or a prefix ending in `*`: `gpt-4o-mini`, `gpt-4o*`,
 * `@openai-prod/gpt-4o`, `@openai-prod/*`, `*`, or an alias name (`default-chat`).
 */

/** What the model of one attempt is known as: the bare name, `@slug/model`, the alias used. */
export interface ModelNames {
  /** The model the provider is sent; null when it cannot be read before the call (streamed bodies). */
  model: string | null;
  /** The stored provider's slug; null for a provider named with the client's own key. */
  providerSlug: string | null;
  /** The alias the client asked for, if any. */
  alias: string | null;
}

export const patternMatches = (pattern: string, name: string): boolean =>
  pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;

/** Whether a list of patterns lets this model through; null or absent lists allow everything. */
export function limitAllows(patterns: readonly string[] | null | undefined, names: ModelNames): boolean {
  if (!patterns) return true;
  const candidates: string[] = [];
  if (names.alias !== null) candidates.push(names.alias);
  if (names.model !== null) {
    candidates.push(names.model);
    if (names.providerSlug !== null) candidates.push(`@${names.providerSlug}/${names.model}`);
  }
  if (candidates.some((name) => patterns.some((pattern) => patternMatches(pattern, name)))) return true;
  if (names.model !== null) return false;
  // The model is unknown: only a pattern that covers every model of the target lets it through.
  const everyModelOf = names.providerSlug === null ? null : `@${names.providerSlug}/`;
  return patterns.some(
    (p) => p === '*' || (p.endsWith('*') && everyModelOf !== null && everyModelOf.startsWith(p.slice(0, -1))),
  );
}

/** Whether a provider's catalogue allows the model; an unknown model only when the catalogue allows every model. */
export function catalogueAllows(policy: ModelPolicy | null, model: string | null): boolean {
  if (policy === null) return true;
  if (model === null) return policy.allowAll && [...policy.entries.values()].every(Boolean);
  return policy.entries.get(model) ?? policy.allowAll;
}

/** True when the key or its workspace limits models at all. */
export const hasModelLimits = (principal: Principal): boolean =>
  Boolean(principal.defaults?.allowed_models) || Boolean(principal.workspaceAllowedModels);

const shown = (model: string | null) => (model === null ? 'an unread model' : JSON.stringify(model.slice(0, 128)));
const UNREAD =
  ' The model of a body that streams through (multipart, pass-through) is not read before the call, so only a limit that allows every model of the provider lets it through.';

/** Refuses, before any provider call, a model that one of the three lists does not allow. */
export function assertModelAllowed(principal: Principal, names: ModelNames, policy: ModelPolicy | null): void {
  const unread = names.model === null ? UNREAD : '';
  const provider = names.providerSlug === null ? null : `@${names.providerSlug}`;
  if (!catalogueAllows(policy, names.model))
    throw new AppError(
      'MODEL_NOT_ALLOWED',
      `The provider ${provider ?? ''} does not allow ${shown(names.model)}: its integration's model list does not enable it.${unread}`,
      { param: 'model' },
    );
  if (!limitAllows(principal.defaults?.allowed_models, names))
    throw new AppError(
      'MODEL_NOT_ALLOWED',
      `This API key may not use ${shown(names.model)}${provider ? ` on ${provider}` : ''}: it is not in the key's defaults.allowed_models.${unread}`,
      { param: 'model' },
    );
  if (!limitAllows(principal.workspaceAllowedModels, names))
    throw new AppError(
      'MODEL_NOT_ALLOWED',
      `This workspace may not use ${shown(names.model)}${provider ? ` on ${provider}` : ''}: it is not in the workspace's defaults.allowed_models.${unread}`,
      { param: 'model' },
    );
}
