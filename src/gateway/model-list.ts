import type { Principal } from '../auth/principal.js';
import type { PricingService } from '../pricing/pricing-service.js';
import type { CredentialLookup, ReachableProvider } from './credential-lookup.js';
import { catalogueAllows, limitAllows, type ModelNames } from './model-access.js';
import { parseModelRoute } from './model-route.js';

/** One entry of `GET /v1/models`, in the OpenAI list shape. */
export interface ListedModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/** What aliases show as their owner: they are svcgw's names, not a provider's. */
export const ALIAS_OWNER = 'svcgw-alias';

/**
 * What a key can reach without a provider header, and may use: for each active stored provider
 * of its workspace, `@<slug>/<model>` for every model its integration allows (the price table's
 * models of that provider type, unless disabled, and the models the integration enables), then
 * the aliases the workspace sees; all of it within the key's and workspace's
 * `defaults.allowed_models`. These are exactly the names the gateway routes and lets through.
 */
export async function reachableModels(
  deps: { credentials: CredentialLookup; pricing: PricingService },
  principal: Principal,
  workspaceId: string,
): Promise<{ object: 'list'; data: ListedModel[] }> {
  const [providers, aliases] = await Promise.all([
    deps.credentials.listProviders(principal, workspaceId),
    deps.credentials.listAliases(principal, workspaceId),
  ]);
  const byType = new Map<string, string[]>();
  for (const { provider, model } of deps.pricing.models()) {
    const models = byType.get(provider);
    if (models) models.push(model);
    else byType.set(provider, [model]);
  }
  const allowed = (names: ModelNames) =>
    limitAllows(principal.defaults?.allowed_models, names) && limitAllows(principal.workspaceAllowedModels, names);
  const usable = (provider: ReachableProvider, model: string, alias: string | null) =>
    catalogueAllows(provider.models, model) && allowed({ model, providerSlug: provider.slug, alias });

  const data: ListedModel[] = [];
  for (const provider of providers) {
    const created = epochSeconds(provider.createdAt);
    const enabled = [...provider.models.entries].filter(([, on]) => on).map(([model]) => model);
    const known = provider.models.allowAll ? (byType.get(provider.providerType) ?? []) : [];
    for (const model of new Set([...known, ...enabled].sort())) {
      if (usable(provider, model, null))
        data.push({ id: `@${provider.slug}/${model}`, object: 'model', created, owned_by: provider.providerType });
    }
  }
  const bySlug = new Map(providers.map((p) => [p.slug, p]));
  for (const alias of aliases) {
    const route = alias.model ? parseModelRoute(alias.model) : null;
    const provider = route ? bySlug.get(route.slug) : undefined;
    const ok = route
      ? provider !== undefined && usable(provider, route.model, alias.name)
      : allowed({ model: null, providerSlug: null, alias: alias.name });
    if (ok)
      data.push({ id: alias.name, object: 'model', created: epochSeconds(alias.createdAt), owned_by: ALIAS_OWNER });
  }
  return { object: 'list', data };
}

const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000) || 0;
