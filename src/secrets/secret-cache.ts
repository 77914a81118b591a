import type { Clock } from '../lib/clock.js';
import type { SecretManagers } from './secret-managers.js';
import type { SecretTarget, SecretValue } from './types.js';

/** How long a secret read from its manager is used before it is read again. */
export const DEFAULT_SECRET_TTL_MS = 300_000;
/** A refresh asked for (a provider answered 401) reads the manager again at most this often per reference. */
export const REFRESH_FLOOR_MS = 10_000;
/** Values kept at most; the oldest go first. */
const MAX_ENTRIES = 5_000;

/** A value read from a secret manager, and when. Its identity tells a caller whether it changed. */
export interface CachedSecret {
  readonly value: SecretValue;
  readonly fetchedAt: number;
}

/**
 * Secrets read from their managers, kept in memory for `ttlMs` per reference version, so that a
 * gateway request does not wait on the secret manager (and the manager is not called per
 * request). Concurrent readers of one reference share one read. Failures are not kept: the
 * next request tries again. Values are never logged.
 */
export function createSecretCache(deps: { managers: SecretManagers; clock: Clock; ttlMs?: number }) {
  const ttlMs = deps.ttlMs ?? DEFAULT_SECRET_TTL_MS;
  const entries = new Map<string, CachedSecret>();
  const inFlight = new Map<string, Promise<CachedSecret>>();
  const keyOf = (target: SecretTarget) => `${target.referenceId}:${target.version}`;

  function load(target: SecretTarget): Promise<CachedSecret> {
    const key = keyOf(target);
    const pending = inFlight.get(key);
    if (pending) return pending;
    const loading = deps.managers
      .read(target)
      .then((value) => {
        const entry: CachedSecret = Object.freeze({ value, fetchedAt: deps.clock.now() });
        entries.delete(key);
        if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
        entries.set(key, entry);
        return entry;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, loading);
    return loading;
  }

  return {
    /** The cached value while it is fresh, else a new read. */
    get(target: SecretTarget): Promise<CachedSecret> {
      const hit = entries.get(keyOf(target));
      if (hit && deps.clock.now() - hit.fetchedAt < ttlMs) return Promise.resolve(hit);
      return load(target);
    },

    /**
     * A fresher value than `seen` (which a provider refused): the one another request has read
     * since, or a new read, unless `seen` was read less than REFRESH_FLOOR_MS ago (then `seen`
     * itself: the manager is not asked again on every refused request).
     */
    refresh(target: SecretTarget, seen: CachedSecret): Promise<CachedSecret> {
      const current = entries.get(keyOf(target));
      if (current && current !== seen && current.fetchedAt >= seen.fetchedAt) return Promise.resolve(current);
      if (deps.clock.now() - seen.fetchedAt < REFRESH_FLOOR_MS) return Promise.resolve(seen);
      return load(target);
    },
  };
}

export type SecretCache = ReturnType<typeof createSecretCache>;
