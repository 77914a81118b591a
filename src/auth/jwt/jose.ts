import type * as Jose from 'jose';
import { lazyModule } from '../../lib/lazy.js';

/**
 * jose, imported when the first JWT is presented (or a key set first fetched), not at start: a
 * server without JWT authentication never loads it (~0.55 MB of heap). Code on the request path
 * takes `jose.loaded() ?? (await jose())`, which awaits nothing once it is loaded.
 */
export const jose = lazyModule<typeof Jose>(() => import('jose'));
