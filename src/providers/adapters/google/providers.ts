import type { EndpointType } from '../../endpoints.js';
import type { ProviderDefinition } from '../../types.js';

const ENDPOINTS: ReadonlySet<EndpointType> = new Set<EndpointType>(['chatComplete', 'embed', 'proxy']);

/** The Gemini API (Google AI Studio keys), authenticated with `x-goog-api-key`. */
export const GOOGLE_PROVIDER: ProviderDefinition = Object.freeze({
  name: 'google',
  displayName: 'Google Gemini API',
  baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  auth: { kind: 'adapter' as const, description: 'x-goog-api-key: <Gemini API key> (the provider key)' },
  wireFormat: 'google',
  endpoints: ENDPOINTS,
  docsUrl: 'https://ai.google.dev/api',
});

/**
 * Gemini models on Vertex AI. The base is the global endpoint; requests go to the regional host
 * `https://{region}-aiplatform.googleapis.com/v1` of the configured region.
 */
export const VERTEX_AI_PROVIDER: ProviderDefinition = Object.freeze({
  name: 'vertex-ai',
  displayName: 'Google Vertex AI',
  baseUrl: 'https://aiplatform.googleapis.com/v1',
  auth: {
    kind: 'adapter' as const,
    description: 'OAuth2 access token minted from a service-account key (or an access token as the provider key)',
  },
  wireFormat: 'vertex-ai',
  endpoints: ENDPOINTS,
  docsUrl: 'https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference',
});
