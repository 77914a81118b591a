import type { Clock } from './clock.js';

/**
 * Values loaded from the database, kept for `ttlMs` and dropped at once by `clear()` when what
 * they were read from changes (on this instance, or on another through the change bus).
 *
 * A load that began before a `clear()` answers its caller but is not kept: it may have read the
 * row before the change committed, and keeping it would hide the change until the TTL ran out.
 */
export interface LoadingCache<V> {
  get(key: string, load: () => Promise<V>): Promise<V>;
  clear(): void;
}

export function createLoadingCache<V>(options: { clock: Clock; ttlMs: number }): LoadingCache<V> {
  const entries = new Map<string, { value: V; loadedAt: number }>();
  let generation = 0;
  return {
    async get(key, load) {
      const now = options.clock.now();
      const hit = entries.get(key);
      if (hit && now - hit.loadedAt < options.ttlMs) return hit.value;
      const startedIn = generation;
      const value = await load();
      if (startedIn === generation) entries.set(key, { value, loadedAt: now });
      return value;
    },
    clear() {
      generation += 1;
      entries.clear();
    },
  };
}
