import { invalid } from '../../lib/errors.js';
import { getProvider } from '../../providers/registry.js';
import type { ProviderDefinition } from '../../providers/types.js';

/** The registry's definition of a provider type named in a request; 400 naming it when unknown. */
export function requireProviderType(id: string, param: string): ProviderDefinition {
  const definition = getProvider(id);
  if (!definition)
    throw invalid(
      param,
      `Unknown provider ${JSON.stringify(id)} in ${param}; use a provider id of the gateway's registry (such as openai).`,
    );
  return definition;
}

/**
 * A provider without a default base URL can only be reached through a host stored with the
 * credential: `custom_host`, or for Azure OpenAI the resource name it builds the host from.
 * Caught here rather than on the first gateway request.
 */
export function checkHostConfigured(
  definition: ProviderDefinition,
  config: Record<string, unknown>,
  param: string,
): void {
  const hasHost = typeof config.custom_host === 'string';
  if (definition.name === 'azure-openai') {
    // The deployment may come with each request (x-service-azure-deployment-id), so only the host is required here.
    if (!hasHost && typeof config.azure_resource_name !== 'string') {
      throw invalid(
        `${param}.azure_resource_name`,
        'Azure OpenAI needs configurations.azure_resource_name (or configurations.custom_host).',
      );
    }
    return;
  }
  if ((definition.requiresCustomHost || definition.baseUrl === null) && !hasHost) {
    throw invalid(
      `${param}.custom_host`,
      `Provider ${definition.name} has no default host: set configurations.custom_host.`,
    );
  }
}
