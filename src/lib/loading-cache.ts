import type { Clock } from './clock.js';

/**
 * Values loaded from the database, kept for `ttlMs` and dropped at once by `clear()` when what
 * they were read from changes (on this instance, or on another through the change bus).
 *
 * A load that began before a `clear()` answers its caller but is not kept: it may have read the
 * row before the change committed, and keeping it would hide the change until the TTL ran out.
 */
export interface LoadingCache<V> {
  /** `load` is given the key, so callers can pass one function instead of a closure per call. */
  get(key: string, load: (key: string) => Promise<V>): Promise<V>;
  /** The value kept for `key` while it is fresh, else undefined: for callers that can skip an await. */
  peek(key: string): V | undefined;
  clear(): void;
}

export function createLoadingCache<V>(options: { clock: Clock; ttlMs: number }): LoadingCache<V> {
  // The settled promise is kept: a hit (nearly every request) allocates no promise of its own.
  const entries = new Map<string, { value: V; settled: Promise<V>; loadedAt: number }>();
  let generation = 0;

  async function loadAndKeep(key: string, load: (key: string) => Promise<V>, now: number): Promise<V> {
    const startedIn = generation;
    const value = await load(key);
    if (startedIn === generation) entries.set(key, { value, settled: Promise.resolve(value), loadedAt: now });
    return value;
  }

  return {
    get(key, load) {
      const now = options.clock.now();
      const hit = entries.get(key);
      if (hit && now - hit.loadedAt < options.ttlMs) return hit.settled;
      return loadAndKeep(key, load, now);
    },
    peek(key) {
      const hit = entries.get(key);
      return hit && options.clock.now() - hit.loadedAt < options.ttlMs ? hit.value : undefined;
    },
    clear() {
      generation += 1;
      entries.clear();
    },
  };
}
