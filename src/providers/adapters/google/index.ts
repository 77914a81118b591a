import type { AdapterModule } from '../types.js';

/** Not built yet: filled in by the google adapter work. */
export const google: AdapterModule = { providers: [], adapter: null };
