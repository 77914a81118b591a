import type { AdapterModule } from '../types.js';

/** Not built yet: filled in by the bedrock adapter work. */
export const bedrock: AdapterModule = { providers: [], adapter: null };
