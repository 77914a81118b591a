import type { AdapterModule } from '../types.js';
import { cohereAdapter } from './adapter.js';
import { COHERE_PROVIDER } from './provider.js';

/** Cohere's native API v2 (chat, embed, rerank). */
export const cohere: AdapterModule = { providers: [COHERE_PROVIDER], adapter: cohereAdapter };
