import type { ProviderDefinition } from '../types.js';
import { anthropic } from './anthropic/index.js';
import { bedrock } from './bedrock/index.js';
import { cohere } from './cohere/index.js';
import { google } from './google/index.js';
import type { WireAdapter } from './types.js';

const MODULES = [anthropic, google, bedrock, cohere];

/** Providers that speak their own wire format, in catalogue order. */
export const ADAPTED_PROVIDERS: ProviderDefinition[] = MODULES.flatMap((module) => module.providers);

const byProvider = new Map<string, WireAdapter>();
for (const module of MODULES) {
  for (const provider of module.providers) if (module.adapter) byProvider.set(provider.name, module.adapter);
}

/** The adapter that translates for this provider; undefined for the OpenAI wire format. */
export function adapterFor(provider: ProviderDefinition): WireAdapter | undefined {
  return provider.wireFormat === 'openai' ? undefined : byProvider.get(provider.name);
}
