/** Response header that tells the client what the cache did with its request. */
export const CACHE_STATUS_HEADER = 'x-service-cache-status';

/**
 * The values of that header and of the request log's `cache_status` column:
 * - HIT: an exact match answered; the provider was not called.
 * - SEMANTIC_HIT: a similar earlier question (same conversation so far) answered.
 * - MISS: nothing matched; the provider's answer is stored when it succeeds.
 * - REFRESH: `x-service-cache-force-refresh: true` skipped the lookup; the answer is stored.
 * - DISABLED: no cache for this request (no `cache` in the config), the column's default.
 */
export const CACHE_STATUSES = ['HIT', 'SEMANTIC_HIT', 'MISS', 'REFRESH', 'DISABLED'] as const;
export type CacheStatus = (typeof CACHE_STATUSES)[number];

export const isCacheHit = (status: CacheStatus): boolean => status === 'HIT' || status === 'SEMANTIC_HIT';

/**
 * Headers for the client's response: the status, and on a hit the standard `age` (seconds since
 * the answer was stored).
 */
export function cacheResponseHeaders(lookup: {
  status: CacheStatus;
  hit: { ageSeconds: number } | null;
}): Record<string, string> {
  const headers: Record<string, string> = { [CACHE_STATUS_HEADER]: lookup.status };
  if (lookup.hit) headers.age = String(lookup.hit.ageSeconds);
  return headers;
}
