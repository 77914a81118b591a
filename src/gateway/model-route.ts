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
