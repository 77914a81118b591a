/**
 * The cache table (migration 0011), declared by module augmentation so that the shared schema
 * file stays untouched.
 */
declare module '../storage/schema.js' {
  interface Database {
    cache_entries: CacheEntriesTable;
  }
}

/** One cached answer. Timestamps are ISO-8601 UTC strings, as everywhere in the schema. */
export interface CacheEntriesTable {
  /** base64url SHA-256 of the normalised request, scope included (see cache-key.ts). */
  cache_key: string;
  organisation_id: string;
  /** '' for requests made without a workspace. */
  workspace_id: string;
  created_at: string;
  /** created_at + the max_age in force when the entry was stored; purged past it. */
  expires_at: string;
  /** Bytes of body + headers + embedding, for accounting. */
  size_bytes: number;
  status: number;
  /** 1 when `body` is the SSE bytes of a streamed answer. */
  is_stream: number;
  /** JSON object of the kept response headers (content-type and the like, never credentials). */
  headers: string;
  /** The provider that answered (migration 0033); null for entries stored before. */
  provider: string | null;
  /** Semantic entries only: the partition they are searched in. */
  partition_key: string | null;
  /** Semantic entries only: 256 sign bits of the rotated embedding (vector-sketch.ts). */
  embedding_sketch: Buffer | null;
  /** Semantic entries only: the unit-length embedding, float32 little-endian. */
  embedding: Buffer | null;
  body: Buffer;
}
