import type * as Jose from 'jose';
import type { JSONWebKeySet, JWTVerifyGetKey } from 'jose';
import { describeFetchError, guardedFetch } from '../../guardrails/net/guarded-fetch.js';
import type { Clock } from '../../lib/clock.js';
import { jose } from './jose.js';

/** The key set could not be fetched (or is not one) and no earlier copy is at hand. */
export class JwksUnavailableError extends Error {
  override name = 'JwksUnavailableError';
}

/** Fetches a JWKS document; the default goes through the guarded HTTP client with a time-out and a size cap. */
export type FetchJwks = (url: string) => Promise<unknown>;

const TIMEOUT_MS = 5_000;
const MAX_BYTES = 512 * 1024;
const MAX_KEYS = 100;
/** An unknown `kid` fetches the set again at most this often, so random kids cannot make us hammer the IdP. */
export const JWKS_REFRESH_COOLDOWN_MS = 30_000;

/**
 * The JWKS URL is the organisation's own IdP, set by its admins: loopback and private addresses
 * are allowed (an IdP inside the network is the usual case), but the fetch has a time-out, a
 * size cap and follows at most 3 redirects.
 */
export const fetchJwksOverHttp: FetchJwks = async (url) => {
  const answer = await guardedFetch(url, {
    allowPrivate: true,
    headers: { accept: 'application/json, application/jwk-set+json' },
    signal: AbortSignal.timeout(TIMEOUT_MS),
    maxRedirects: 3,
    maxBytes: MAX_BYTES,
  });
  if (answer.status !== 200) throw new Error(`it answered HTTP ${answer.status}`);
  return JSON.parse(answer.body.toString('utf8')) as unknown;
};

interface Entry {
  keys: JWTVerifyGetKey | null;
  fetchedAt: number;
  attemptedAt: number;
  inflight: Promise<void> | null;
}

/**
 * Key sets by URL, kept in memory and fetched again once older than the caller's max age, or
 * sooner when a token names a `kid` the set lacks (jose's remote-set behaviour, but on the
 * injected clock, so tests rotate keys without waiting). A set that cannot be fetched again is
 * kept in use (the IdP being down does not log everyone out); with none at all, verification
 * fails with JwksUnavailableError.
 */
export function createJwksCache(deps: {
  clock: Clock;
  fetchJwks?: FetchJwks;
  onStale?: (url: string, reason: string) => void;
}) {
  const fetchJwks = deps.fetchJwks ?? fetchJwksOverHttp;
  const entries = new Map<string, Entry>();

  function entryFor(url: string): Entry {
    let entry = entries.get(url);
    if (!entry) {
      if (entries.size >= 100) entries.delete(entries.keys().next().value!);
      entry = { keys: null, fetchedAt: 0, attemptedAt: -Infinity, inflight: null };
      entries.set(url, entry);
    }
    return entry;
  }

  /** One fetch at a time per URL; concurrent callers wait for the same one. */
  function refresh(url: string, entry: Entry): Promise<void> {
    entry.inflight ??= (async () => {
      entry.attemptedAt = deps.clock.now();
      try {
        const document = await fetchJwks(url).catch((error: unknown) => {
          throw new JwksUnavailableError(`the JWKS could not be fetched: ${describeFetchError(error)}`);
        });
        entry.keys = localSet(jose.loaded() ?? (await jose()), document);
        entry.fetchedAt = deps.clock.now();
      } finally {
        entry.inflight = null;
      }
    })();
    return entry.inflight;
  }

  /** Fetches when due; an old set stays in use when the fetch fails, and failures are retried after the cooldown. */
  async function current(url: string, entry: Entry, maxAgeMs: number): Promise<JWTVerifyGetKey> {
    const now = deps.clock.now();
    const due = entry.keys === null || now - entry.fetchedAt >= maxAgeMs;
    if (due && (entry.keys === null || now - entry.attemptedAt >= JWKS_REFRESH_COOLDOWN_MS)) {
      try {
        await refresh(url, entry);
      } catch (error) {
        if (entry.keys === null) throw error;
        deps.onStale?.(url, (error as Error).message);
      }
    }
    return entry.keys!;
  }

  return {
    /** A key resolver for jose's jwtVerify over the set at `url`. */
    keysFor(url: string, maxAgeMs: number): JWTVerifyGetKey {
      return async (header, token) => {
        const entry = entryFor(url);
        const keys = await current(url, entry, maxAgeMs);
        try {
          return await keys(header, token);
        } catch (error) {
          // An error of the key set's comes from a loaded jose.
          const noMatchingKey = jose.loaded()?.errors.JWKSNoMatchingKey;
          if (!noMatchingKey || !(error instanceof noMatchingKey)) throw error;
          if (deps.clock.now() - entry.attemptedAt < JWKS_REFRESH_COOLDOWN_MS) throw error;
          // The IdP may have rotated its keys since we fetched them.
          await refresh(url, entry);
          return entry.keys!(header, token);
        }
      };
    },

    /** Forgets every fetched set (the settings changed). */
    invalidate(): void {
      entries.clear();
    },
  };
}

export type JwksCache = ReturnType<typeof createJwksCache>;

function localSet({ createLocalJWKSet }: typeof Jose, document: unknown): JWTVerifyGetKey {
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new JwksUnavailableError('the JWKS is not a JSON Web Key Set (no "keys" array)');
  if (keys.length > MAX_KEYS) throw new JwksUnavailableError(`the JWKS holds more than ${MAX_KEYS} keys`);
  return createLocalJWKSet(document as JSONWebKeySet);
}
