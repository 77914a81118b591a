import { ENDPOINT_TYPES } from '../../providers/endpoints.js';
import { listProviders } from '../../providers/registry.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';

/** The providers the gateway can reach by name, with the endpoint families each serves. */
export function registerProviderCatalogRoute(app: ZodApp): void {
  const catalog = listProviders().map((provider) => ({
    name: provider.name,
    display_name: provider.displayName,
    base_url: provider.baseUrl,
    auth:
      provider.auth.kind === 'header'
        ? `header ${provider.auth.header}`
        : provider.auth.kind === 'adapter'
          ? provider.auth.description
          : provider.auth.kind,
    /** `openai`: forwarded as it is; any other: translated both ways by the gateway. */
    wire_format: provider.wireFormat,
    requires_custom_host: provider.requiresCustomHost === true,
    endpoints: ENDPOINT_TYPES.filter((endpoint) => endpoint === 'proxy' || provider.endpoints.has(endpoint)),
    object: 'provider-definition' as const,
  }));
  app.get(
    '/v1/providers/catalog',
    {
      schema: { tags: ['Providers'], summary: 'List every provider the gateway can reach by name' },
      config: { auth: { scope: null, keyTypes: BOTH_KEY_TYPES } },
    },
    async () => listBody(catalog, catalog.length),
  );
}
