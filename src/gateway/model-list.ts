import type { Principal } from '../auth/principal.js';
import type { PricingService } from '../pricing/pricing-service.js';
import type { CredentialLookup } from './credential-lookup.js';

/** One entry of `GET /v1/models`, in the OpenAI list shape. */
export interface ListedModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/**
 * What a key can reach without a provider header: for each active stored provider of its
 * workspace, `@<slug>/<model>` for every model svcgw knows of that provider's type. These are
 * exactly the names `model: "@slug/model"` routes, so a tool can offer them as they are.
 */
export async function reachableModels(
  deps: { credentials: CredentialLookup; pricing: PricingService },
  principal: Principal,
  workspaceId: string,
): Promise<{ object: 'list'; data: ListedModel[] }> {
  const providers = await deps.credentials.listProviders(principal, workspaceId);
  const byType = new Map<string, string[]>();
  for (const { provider, model } of deps.pricing.models()) {
    const models = byType.get(provider);
    if (models) models.push(model);
    else byType.set(provider, [model]);
  }
  const data: ListedModel[] = [];
  for (const provider of providers) {
    const created = Math.floor(Date.parse(provider.createdAt) / 1000) || 0;
    for (const model of byType.get(provider.providerType) ?? []) {
      data.push({ id: `@${provider.slug}/${model}`, object: 'model', created, owned_by: provider.providerType });
    }
  }
  return { object: 'list', data };
}
