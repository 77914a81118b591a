import type { AdapterModule } from '../types.js';
import { createGoogleAdapter } from './adapter.js';
import { GOOGLE_PROVIDER, VERTEX_AI_PROVIDER } from './providers.js';

/** The Gemini API (`google`) and Gemini on Vertex AI (`vertex-ai`), one adapter for both. */
export const google: AdapterModule = {
  providers: [GOOGLE_PROVIDER, VERTEX_AI_PROVIDER],
  adapter: createGoogleAdapter(),
};
