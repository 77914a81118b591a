import type { AdapterModule } from '../types.js';

/** Not built yet: filled in by the cohere adapter work. */
export const cohere: AdapterModule = { providers: [], adapter: null };
