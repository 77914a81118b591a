import { ADAPTED_PROVIDERS } from './adapters/index.js';
import { OPENAI_COMPATIBLE_PROVIDERS, PROVIDER_ALIASES } from './catalog.js';
import type { EndpointType } from './endpoints.js';
import type { ProviderDefinition } from './types.js';

export { ProviderConfigError, UpstreamPathError } from './errors.js';
export { AZURE_DEFAULT_API_VERSION, buildUpstreamTarget } from './upstream-target.js';
export { adapterFor } from './adapters/index.js';

const ALL_PROVIDERS: readonly ProviderDefinition[] = [...OPENAI_COMPATIBLE_PROVIDERS, ...ADAPTED_PROVIDERS];
const byName: ReadonlyMap<string, ProviderDefinition> = new Map(
  ALL_PROVIDERS.map((provider) => [provider.name, provider]),
);

/**
 * The provider registered under `name`, or under an alias of it ('azure' → 'azure-openai').
 * Names are case-sensitive, as they are in the provider header and configs that carry them.
 */
export function getProvider(name: string): ProviderDefinition | undefined {
  return (
    byName.get(name) ?? (Object.hasOwn(PROVIDER_ALIASES, name) ? byName.get(PROVIDER_ALIASES[name] ?? '') : undefined)
  );
}

/** Every registered provider, in catalogue order (for docs, the admin API and CLI listings). */
export function listProviders(): ProviderDefinition[] {
  return [...ALL_PROVIDERS];
}

/** Whether the provider serves this endpoint family; every provider serves 'proxy'. */
export function supportsEndpoint(provider: ProviderDefinition, endpoint: EndpointType): boolean {
  return endpoint === 'proxy' || provider.endpoints.has(endpoint);
}
