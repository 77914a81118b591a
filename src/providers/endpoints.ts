/**
 * The endpoint families the gateway knows. A family is what limits, logs, pricing and
 * provider capabilities are keyed on; `proxy` is any other `/v1/*` path, passed through to
 * the provider unchanged.
 */
export const ENDPOINT_TYPES = [
  'chatComplete',
  'complete',
  'embed',
  'rerank',
  'imageGenerate',
  'imageEdit',
  'createSpeech',
  'createTranscription',
  'createTranslation',
  'moderate',
  'createModelResponse',
  'listModels',
  'proxy',
] as const;

export type EndpointType = (typeof ENDPOINT_TYPES)[number];

export interface EndpointRoute {
  method: 'GET' | 'POST';
  /** Relative to the provider's versioned base (`/v1` on OpenAI), always starting with '/'. */
  path: string;
}

/**
 * Where each family lives on the OpenAI wire format. Providers that speak it expose the same
 * paths under their own base URL, so the gateway maps a client path to a family (and back)
 * through this one table.
 */
export const ENDPOINT_PATHS: Readonly<Record<Exclude<EndpointType, 'proxy'>, EndpointRoute>> = Object.freeze({
  chatComplete: { method: 'POST', path: '/chat/completions' },
  complete: { method: 'POST', path: '/completions' },
  embed: { method: 'POST', path: '/embeddings' },
  rerank: { method: 'POST', path: '/rerank' },
  imageGenerate: { method: 'POST', path: '/images/generations' },
  imageEdit: { method: 'POST', path: '/images/edits' },
  createSpeech: { method: 'POST', path: '/audio/speech' },
  createTranscription: { method: 'POST', path: '/audio/transcriptions' },
  createTranslation: { method: 'POST', path: '/audio/translations' },
  moderate: { method: 'POST', path: '/moderations' },
  createModelResponse: { method: 'POST', path: '/responses' },
  listModels: { method: 'GET', path: '/models' },
});

export function isEndpointType(value: string): value is EndpointType {
  return (ENDPOINT_TYPES as readonly string[]).includes(value);
}
