import type { EndpointType } from '../../endpoints.js';
import type { ProviderDefinition } from '../../types.js';

/**
 * The Anthropic Messages API. The base carries `/v1` like the OpenAI-compatible entries, so a
 * pass-through path such as `/messages` (the client's `/v1/messages`) lands on
 * `https://api.anthropic.com/v1/messages`, and a bare custom host gets `/v1` appended.
 */
export const ANTHROPIC_PROVIDER: ProviderDefinition = Object.freeze({
  name: 'anthropic',
  displayName: 'Anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  auth: { kind: 'adapter', description: 'x-api-key header' },
  wireFormat: 'anthropic',
  endpoints: new Set<EndpointType>(['chatComplete', 'complete', 'listModels', 'proxy']),
  docsUrl: 'https://docs.claude.com/en/api/messages',
} as const);
