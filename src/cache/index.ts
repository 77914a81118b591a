export {
  createResponseCache,
  DEFAULT_CACHE_LIMITS,
  type CacheHit,
  type CacheLimits,
  type CacheLookup,
  type CacheOptions,
  type CacheSettings,
  type ResponseCache,
} from './response-cache.js';
export type { CacheRequest } from './cache-key.js';
export { keptHeaders, type CachedResponse } from './cache-entry.js';
export {
  CACHE_STATUS_HEADER,
  CACHE_STATUSES,
  cacheResponseHeaders,
  isCacheHit,
  type CacheStatus,
} from './cache-status.js';
export { createCacheCapture, replaySse } from './sse-replay.js';
