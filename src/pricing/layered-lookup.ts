import type { Clock } from '../lib/clock.js';
import { PROVIDER_ID, type ModelConfigSource, type SourceName } from './model-config-sources.js';

export interface Found<T> {
  value: T;
  /** The source that answered (a cached answer keeps the source it came from). */
  source: SourceName;
  /** The entry that matched: the model itself, or its undated id for a dated model. */
  entry: string;
}

/** `gpt-4o-2024-08-06` and `claude-opus-4-1-20250805` are priced as their undated ids when they have no entry of their own. */
const DATE_SUFFIXES = [/-\d{4}-\d{2}-\d{2}$/, /-\d{8}$/];

export function matchEntry<T>(entries: ReadonlyMap<string, T>, model: string): { entry: string; value: T } | null {
  const exact = entries.get(model);
  if (exact !== undefined) return { entry: model, value: exact };
  for (const suffix of DATE_SUFFIXES) {
    if (!suffix.test(model)) continue;
    const undated = model.replace(suffix, '');
    const value = entries.get(undated);
    if (value !== undefined) return { entry: undated, value };
  }
  return null;
}

export const MAX_MODEL_ID_LENGTH = 256;

/**
 * Asks the sources in order and remembers the answer per provider and model: `ttlMs` for an
 * answer, `missTtlMs` for "no source knows it", so that an unknown model costs one walk over
 * the sources per `missTtlMs` instead of one per request. The memory is bounded; the oldest
 * answers go first.
 */
export function createLayeredLookup<T>(deps: {
  sources: ReadonlyArray<ModelConfigSource<T>>;
  clock: Clock;
  ttlMs: number;
  missTtlMs: number;
  maxEntries?: number;
}) {
  const maxEntries = deps.maxEntries ?? 10_000;
  // The answer is kept as a settled promise: a remembered answer (nearly every request) allocates none.
  const cache = new Map<string, { found: Found<T> | null; answer: Promise<Found<T> | null>; expiresAt: number }>();
  const valid = (provider: string, model: string) =>
    PROVIDER_ID.test(provider) && model.length > 0 && model.length <= MAX_MODEL_ID_LENGTH;

  function remember(key: string, found: Found<T> | null, expiresAt: number): void {
    cache.delete(key);
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
    cache.set(key, { found, answer: Promise.resolve(found), expiresAt });
  }

  async function askSources(key: string, provider: string, model: string, now: number): Promise<Found<T> | null> {
    for (const source of deps.sources) {
      const table = await source.tableFor(provider);
      const match = table ? matchEntry(table.entries, model) : null;
      if (!table || !match) continue;
      const found: Found<T> = { value: match.value, source: source.name, entry: match.entry };
      remember(key, found, Math.min(table.fetchedAt ?? now, now) + deps.ttlMs);
      return found;
    }
    remember(key, null, now + deps.missTtlMs);
    return null;
  }

  return {
    lookup(provider: string, model: string): Promise<Found<T> | null> {
      if (!valid(provider, model)) return Promise.resolve(null);
      const key = `${provider}\n${model}`;
      const now = deps.clock.now();
      const cached = cache.get(key);
      if (cached && cached.expiresAt > now) return cached.answer;
      return askSources(key, provider, model, now);
    },
    /** The remembered answer, asking no source: undefined when there is none (or it has expired). */
    peek(provider: string, model: string): Found<T> | null | undefined {
      if (!valid(provider, model)) return null;
      const cached = cache.get(`${provider}\n${model}`);
      return cached && cached.expiresAt > deps.clock.now() ? cached.found : undefined;
    },
    /** Forgets every remembered answer (tests, and a future admin "reload"). */
    clear: () => cache.clear(),
  };
}
