import type { Dispatcher } from 'undici';
import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import { rawSqlite, type Db } from '../storage/database.js';
import type { Logger } from '../telemetry/logger.js';
import { keptHeaders, type CacheEntry, type CachedResponse } from './cache-entry.js';
import { exactCacheKey, splitForSemantic, type CacheRequest, type SemanticSplit } from './cache-key.js';
import type { CacheStatus } from './cache-status.js';
import { createCacheStore, type CacheStoreLimits } from './cache-store.js';
import { createEmbeddingClient, type EmbedText } from './embedding-client.js';
import { createSemanticIndex } from './semantic-index.js';
import { dot, hammingCutoff, normalise, sketch } from './vector-sketch.js';

export type CacheSettings = Pick<
  Config,
  | 'cache_purge_interval_ms'
  | 'semantic_cache_threshold'
  | 'semantic_cache_embedding_url'
  | 'semantic_cache_embedding_api_key'
  | 'semantic_cache_embedding_model'
>;

export interface CacheLimits extends CacheStoreLimits {
  /** Answers with a larger body are not cached. */
  maxBodyBytes: number;
  /** max_age when the config's `cache` has none. */
  defaultMaxAgeSeconds: number;
  /** Longer max_age values are shortened to this. */
  maxMaxAgeSeconds: number;
  /** Sketches held in memory over all semantic partitions. */
  maxIndexedEntries: number;
  /** Closest sketches compared exactly per semantic lookup. */
  semanticCandidates: number;
  /** How long a lookup waits for the embedding model. */
  embeddingTimeoutMs: number;
  /** Rows read at a time while a semantic partition loads into memory. */
  partitionPageSize: number;
}

export const DEFAULT_CACHE_LIMITS: Readonly<CacheLimits> = Object.freeze({
  maxBodyBytes: 1024 * 1024,
  defaultMaxAgeSeconds: 7 * 24 * 3600,
  maxMaxAgeSeconds: 365 * 24 * 3600,
  maxIndexedEntries: 500_000,
  semanticCandidates: 64,
  embeddingTimeoutMs: 2000,
  partitionPageSize: 5000,
  flushIntervalMs: 200,
  flushBatchSize: 200,
  maxPendingBytes: 64 * 1024 * 1024,
  maxStoredEntries: 1_000_000,
  purgeBatchSize: 2000,
});

/** The `cache` of a gateway config, plus `x-service-cache-force-refresh`. */
export interface CacheOptions {
  mode: 'simple' | 'semantic';
  maxAgeSeconds?: number | undefined;
  forceRefresh?: boolean | undefined;
}

export interface CacheHit {
  response: CachedResponse;
  /** Whole seconds since the answer was stored (for an `age` header). */
  ageSeconds: number;
  /** Cosine similarity of a semantic hit; null for an exact one. */
  similarity: number | null;
}

/** The outcome of a lookup, and the way to store the answer that a miss goes on to get. */
export interface CacheLookup {
  status: CacheStatus;
  hit: CacheHit | null;
  /**
   * Keeps the provider's answer after a MISS or REFRESH (a no-op otherwise, and after the first
   * call). Only 2xx answers no larger than the body limit are kept, and streams that end in
   * an error event are not. Returns at once; never throws.
   */
  store(response: CachedResponse): void;
}

const noStore = (): void => {};
const DISABLED: CacheLookup = Object.freeze({ status: 'DISABLED', hit: null, store: noStore });

/**
 * The gateway's response cache. `simple` answers the same normalised request (same
 * organisation, workspace, namespace, route and body) while it is younger than max_age;
 * `semantic` also answers a chat request whose last user message means the same as a cached
 * one (embedding similarity at or above the threshold) when everything else is identical.
 * See docs/cache.md.
 */
export function createResponseCache(deps: {
  db: Db;
  clock: Clock;
  config: CacheSettings;
  logger: Logger;
  dispatcher?: Dispatcher;
  limits?: Partial<CacheLimits>;
  embed?: EmbedText;
}) {
  const { clock, config, logger } = deps;
  const limits: CacheLimits = { ...DEFAULT_CACHE_LIMITS, ...deps.limits };
  const sqlite = rawSqlite(deps.db);
  if (!sqlite) throw new Error('the response cache needs the SQLite database');
  const store = createCacheStore({ sqlite, logger, limits });
  const index = createSemanticIndex({
    source: {
      page: (partitionKey, after, limit) => store.loadPartitionPage(partitionKey, clock.now(), after, limit),
      pending: (partitionKey) => store.pendingOfPartition(partitionKey),
    },
    maxEntries: limits.maxIndexedEntries,
    pageSize: limits.partitionPageSize,
  });
  const embed: EmbedText | null =
    deps.embed ??
    (config.semantic_cache_embedding_url
      ? createEmbeddingClient({
          baseUrl: config.semantic_cache_embedding_url,
          apiKey: config.semantic_cache_embedding_api_key,
          model: config.semantic_cache_embedding_model,
          timeoutMs: limits.embeddingTimeoutMs,
          logger,
          ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}),
        })
      : null);
  const cutoff = hammingCutoff(config.semantic_cache_threshold);
  let purgeTimer: NodeJS.Timeout | null = null;
  let purging: Promise<number> | null = null;

  const maxAgeMs = (options: CacheOptions): number =>
    Math.min(options.maxAgeSeconds ?? limits.defaultMaxAgeSeconds, limits.maxMaxAgeSeconds) * 1000;

  /** A unit embedding and its sketch, or null when the model gave nothing usable. */
  async function embedding(text: string): Promise<{ vector: Float32Array; bits: Uint32Array } | null> {
    const raw = await embed!(text);
    const vector = raw && normalise(raw);
    return vector ? { vector, bits: sketch(vector) } : null;
  }

  /** The most similar live entry of the partition at or above the threshold, if any. */
  async function semanticMatch(
    split: SemanticSplit,
    query: { vector: Float32Array; bits: Uint32Array },
    notBefore: number,
  ): Promise<{ cacheKey: string; similarity: number } | null> {
    const candidates = await index.candidates(split.partitionKey, query.bits, {
      cutoff,
      now: clock.now(),
      notBefore,
      limit: limits.semanticCandidates,
    });
    let best: { cacheKey: string; similarity: number } | null = null;
    for (const candidate of candidates) {
      const stored = store.embedding(candidate.cacheKey);
      if (!stored) {
        index.remove(split.partitionKey, candidate.cacheKey);
        continue;
      }
      const similarity = dot(query.vector, stored);
      if (similarity >= config.semantic_cache_threshold && (best === null || similarity > best.similarity))
        best = { cacheKey: candidate.cacheKey, similarity };
    }
    return best;
  }

  function storable(response: CachedResponse): boolean {
    if (response.status < 200 || response.status > 299 || response.body.length > limits.maxBodyBytes) return false;
    // A stream that ended in an error event (a provider failing midway) is not an answer.
    return !response.stream || !/(^|\n)data: ?\{"error"/.test(response.body.toString('utf8'));
  }

  function storer(
    req: CacheRequest,
    cacheKey: string,
    options: CacheOptions,
    semantic: { split: SemanticSplit; query: Promise<{ vector: Float32Array; bits: Uint32Array } | null> } | null,
  ) {
    let done = false;
    return (response: CachedResponse): void => {
      if (done) return;
      done = true;
      try {
        if (!storable(response)) return;
        const createdAt = clock.now();
        const entry: CacheEntry = {
          cacheKey,
          organisationId: req.organisationId,
          workspaceId: req.workspaceId ?? '',
          createdAt,
          expiresAt: createdAt + maxAgeMs(options),
          response: {
            status: response.status,
            headers: keptHeaders(response.headers),
            body: response.body,
            stream: response.stream,
            provider: response.provider ?? null,
          },
          semantic: null,
        };
        if (!semantic) {
          store.put(entry);
          return;
        }
        void semantic.query
          .then((query) => {
            if (query)
              entry.semantic = {
                partitionKey: semantic.split.partitionKey,
                embedding: query.vector,
                sketch: query.bits,
              };
            if (store.put(entry) && entry.semantic)
              index.add(entry.semantic.partitionKey, cacheKey, entry.semantic.sketch, entry.createdAt, entry.expiresAt);
          })
          .catch((error: unknown) => logger.warn({ err: error }, 'response cache store failed'));
      } catch (error) {
        logger.warn({ err: error }, 'response cache store failed');
      }
    };
  }

  /** Never rejects: a cache that fails (a locked or broken database) only costs the hit. */
  async function lookup(req: CacheRequest, options: CacheOptions | null | undefined): Promise<CacheLookup> {
    if (!options) return DISABLED;
    try {
      return await lookupOrThrow(req, options);
    } catch (error) {
      logger.warn({ err: error }, 'response cache lookup failed; going on without it');
      return { status: 'MISS', hit: null, store: noStore };
    }
  }

  async function lookupOrThrow(req: CacheRequest, options: CacheOptions): Promise<CacheLookup> {
    const cacheKey = exactCacheKey(req);
    const split =
      options.mode === 'semantic' && embed ? splitForSemantic(req, config.semantic_cache_embedding_model) : null;
    const notBefore = clock.now() - maxAgeMs(options);

    if (options.forceRefresh) {
      // The embedding is only needed to store the fresh answer: compute it meanwhile, off the request's path.
      const semantic = split ? { split, query: embedding(split.text).catch(() => null) } : null;
      return { status: 'REFRESH', hit: null, store: storer(req, cacheKey, options, semantic) };
    }

    const exact = store.get(cacheKey, req.organisationId, req.workspaceId ?? '');
    if (exact && exact.expiresAt > clock.now() && exact.createdAt >= notBefore) {
      return {
        status: 'HIT',
        hit: { response: exact.response, ageSeconds: ageSeconds(exact.createdAt), similarity: null },
        store: noStore,
      };
    }
    if (!split) return { status: 'MISS', hit: null, store: storer(req, cacheKey, options, null) };

    const query = await embedding(split.text).catch((error: unknown) => {
      logger.warn({ err: error }, 'semantic cache: embedding failed');
      return null;
    });
    if (query) {
      const match = await semanticMatch(split, query, notBefore);
      const entry = match && store.get(match.cacheKey, req.organisationId, req.workspaceId ?? '');
      if (match && entry) {
        return {
          status: 'SEMANTIC_HIT',
          hit: { response: entry.response, ageSeconds: ageSeconds(entry.createdAt), similarity: match.similarity },
          store: noStore,
        };
      }
    }
    return {
      status: 'MISS',
      hit: null,
      store: storer(req, cacheKey, options, { split, query: Promise.resolve(query) }),
    };
  }

  const ageSeconds = (createdAt: number): number => Math.max(0, Math.floor((clock.now() - createdAt) / 1000));

  /** Deletes expired entries (disk and memory); one purge at a time. */
  function purgeExpired(): Promise<number> {
    purging ??= (async () => {
      try {
        const now = clock.now();
        const deleted = await store.purge(now);
        index.dropExpired(now);
        return deleted;
      } finally {
        purging = null;
      }
    })();
    return purging;
  }

  return {
    lookup,
    purgeExpired,
    /** Starts the background purge every `cache_purge_interval_ms`. */
    start(): void {
      if (purgeTimer !== null) return;
      purgeTimer = setInterval(() => {
        purgeExpired().catch((error: unknown) => logger.error({ err: error }, 'response cache purge failed'));
      }, config.cache_purge_interval_ms);
      purgeTimer.unref();
    },
    /** Stops the purge and writes pending entries; call before closing the database. */
    async stop(): Promise<void> {
      if (purgeTimer !== null) clearInterval(purgeTimer);
      purgeTimer = null;
      await purging?.catch(() => 0);
      store.flush();
    },
    /** Writes pending entries now (tests, shutdown). */
    flush: (): void => store.flush(),
    /** Whether `semantic` mode can match by meaning (an embedding URL is set). */
    semanticEnabled: embed !== null,
    get stats() {
      return { pendingWrites: store.pendingCount, indexedEntries: index.size, indexedPartitions: index.partitionCount };
    },
  };
}

export type ResponseCache = ReturnType<typeof createResponseCache>;
