/** An answer as the cache keeps and returns it. */
export interface CachedResponse {
  status: number;
  /** Only the headers that describe the body (see keptHeaders); never credentials. */
  headers: Record<string, string>;
  /** The bytes as sent to the client: JSON, or for a stream the SSE events. */
  body: Buffer;
  /** True when `body` is a server-sent event stream, to be replayed as one (replaySse). */
  stream: boolean;
  /** The provider that gave the answer, so that a hit can be priced as the call it replaces; null: unknown. */
  provider?: string | null;
}

/** One entry, as held in memory before it is written and as read back. */
export interface CacheEntry {
  cacheKey: string;
  organisationId: string;
  /** '' when the request had no workspace. */
  workspaceId: string;
  createdAt: number;
  expiresAt: number;
  response: CachedResponse;
  /** Semantic entries only. */
  semantic: { partitionKey: string; embedding: Float32Array; sketch: Uint32Array } | null;
}

/**
 * Response headers worth replaying: they describe the body. Everything else (set-cookie,
 * provider request ids, rate-limit counters, anything with a credential) belongs to the
 * original exchange and is dropped.
 */
const KEPT_HEADERS = new Set(['content-type', 'content-encoding', 'content-language']);

export function keptHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (KEPT_HEADERS.has(lower) && value !== undefined) kept[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  return kept;
}

/** Bytes an entry costs, roughly: what memory and size limits count. */
export function entrySize(entry: CacheEntry): number {
  let size = entry.response.body.length + 256;
  for (const [name, value] of Object.entries(entry.response.headers)) size += name.length + value.length;
  if (entry.semantic)
    size += entry.semantic.embedding.byteLength + entry.semantic.sketch.byteLength + entry.semantic.partitionKey.length;
  return size;
}
