import type { EndpointType } from '../../endpoints.js';
import type { ProviderDefinition } from '../../types.js';

/** Cohere's native API v2: chat, embed and rerank, translated from and to the OpenAI shapes. */
export const COHERE_PROVIDER: ProviderDefinition = Object.freeze({
  name: 'cohere',
  displayName: 'Cohere',
  baseUrl: 'https://api.cohere.com/v2',
  auth: { kind: 'adapter', description: 'Authorization: Bearer <Cohere API key> (the provider key)' } as const,
  wireFormat: 'cohere',
  endpoints: new Set<EndpointType>(['chatComplete', 'embed', 'rerank', 'proxy']),
  docsUrl: 'https://docs.cohere.com/reference/chat',
});
