import type { AdapterModule } from '../types.js';

/** Not built yet: filled in by the anthropic adapter work. */
export const anthropic: AdapterModule = { providers: [], adapter: null };
