import type SQLite from 'better-sqlite3';
import type { Logger } from '../telemetry/logger.js';
import { entrySize, type CacheEntry, type CachedResponse } from './cache-entry.js';
import { bufferToVector, sketchToBuffer, vectorToBuffer } from './vector-sketch.js';
import './tables.js';

export interface CacheStoreLimits {
  /** Entries waiting to be written are flushed after this long (or at `flushBatchSize`). */
  flushIntervalMs: number;
  flushBatchSize: number;
  /** Bytes of entries waiting to be written; past it new entries are dropped (it is a cache). */
  maxPendingBytes: number;
  /** Rows kept on disk; the purge removes the ones closest to expiry beyond it. */
  maxStoredEntries: number;
  /** Rows deleted per statement while purging, so that a big purge never holds the database long. */
  purgeBatchSize: number;
}

/** A row of a semantic partition, as loaded into the in-memory index. */
export interface PartitionRow {
  cacheKey: string;
  createdAt: number;
  expiresAt: number;
  sketch: Buffer | Uint32Array;
}

const COLUMNS = [
  'cache_key',
  'organisation_id',
  'workspace_id',
  'created_at',
  'expires_at',
  'size_bytes',
  'status',
  'is_stream',
  'headers',
  'provider',
  'partition_key',
  'embedding_sketch',
  'embedding',
  'body',
] as const;

/** expires_at, created_at, cache_key, embedding_sketch. */
type PartitionRowRaw = [string, string, string, Buffer];

/** Where the previous page of a partition ended. */
export type PartitionCursor = [expiresAt: string, createdAt: string, cacheKey: string];

type ResponseRow = {
  created_at: string;
  expires_at: string;
  status: number;
  is_stream: number;
  headers: string;
  provider: string | null;
  body: Buffer;
};

/**
 * Cache persistence in SQLite, with better-sqlite3 prepared statements: a hit is one indexed
 * point read, and new entries wait in memory (where lookups already see them) until they are
 * written in batches, so that no request waits for a disk write.
 */
export function createCacheStore(deps: { sqlite: SQLite.Database; logger: Logger; limits: CacheStoreLimits }) {
  const { sqlite, logger, limits } = deps;
  const pending = new Map<string, CacheEntry>();
  let pendingBytes = 0;
  let dropped = 0;
  let timer: NodeJS.Timeout | null = null;

  const upsert = sqlite.prepare(
    `INSERT INTO cache_entries (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})
     ON CONFLICT (cache_key) DO UPDATE SET ${COLUMNS.slice(1)
       .map((c) => `${c} = excluded.${c}`)
       .join(', ')}`,
  );
  const writeAll = sqlite.transaction((entries: CacheEntry[]) => {
    for (const entry of entries) upsert.run(rowValues(entry));
  });
  const selectResponse = sqlite.prepare<[string, string, string], ResponseRow>(
    'SELECT created_at, expires_at, status, is_stream, headers, provider, body FROM cache_entries WHERE cache_key = ? AND organisation_id = ? AND workspace_id = ?',
  );
  const selectEmbedding = sqlite
    .prepare<[string], { embedding: Buffer | null }>('SELECT embedding FROM cache_entries WHERE cache_key = ?')
    .pluck();
  // Pages through a partition newest expiry first by (expires_at, created_at, cache_key), all
  // read from the covering index; paging lets a big partition load without blocking the loop.
  const PARTITION_COLUMNS =
    'SELECT expires_at, created_at, cache_key, embedding_sketch FROM cache_entries INDEXED BY cache_entries_partition';
  const partitionOrder =
    'AND embedding_sketch IS NOT NULL ORDER BY expires_at DESC, created_at DESC, cache_key DESC LIMIT ?';
  const selectPartitionFirst = sqlite
    .prepare<[string, string, number], PartitionRowRaw>(
      `${PARTITION_COLUMNS} WHERE partition_key = ? AND expires_at > ? ${partitionOrder}`,
    )
    .raw();
  const selectPartitionNext = sqlite
    .prepare<[string, string, string, string, string, number], PartitionRowRaw>(
      `${PARTITION_COLUMNS} WHERE partition_key = ? AND expires_at > ? AND (expires_at, created_at, cache_key) < (?, ?, ?) ${partitionOrder}`,
    )
    .raw();
  const purgeBatch = sqlite.prepare<[string, number]>(
    'DELETE FROM cache_entries WHERE rowid IN (SELECT rowid FROM cache_entries WHERE expires_at <= ? LIMIT ?)',
  );
  const countRows = sqlite.prepare<[], number>('SELECT COUNT(*) FROM cache_entries').pluck();
  const trimBatch = sqlite.prepare<[number]>(
    'DELETE FROM cache_entries WHERE rowid IN (SELECT rowid FROM cache_entries ORDER BY expires_at LIMIT ?)',
  );

  function rowValues(entry: CacheEntry): unknown[] {
    const { response, semantic } = entry;
    return [
      entry.cacheKey,
      entry.organisationId,
      entry.workspaceId,
      new Date(entry.createdAt).toISOString(),
      new Date(entry.expiresAt).toISOString(),
      entrySize(entry),
      response.status,
      response.stream ? 1 : 0,
      JSON.stringify(response.headers),
      response.provider ?? null,
      semantic?.partitionKey ?? null,
      semantic ? sketchToBuffer(semantic.sketch) : null,
      semantic ? vectorToBuffer(semantic.embedding) : null,
      response.body,
    ];
  }

  function schedule(): void {
    if (timer === null) {
      timer = setTimeout(flush, limits.flushIntervalMs);
      timer.unref();
    }
  }

  /** Writes every pending entry in one transaction; a failure drops them (logged), never throws. */
  function flush(): void {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (pending.size === 0) return;
    const batch = [...pending.values()];
    try {
      writeAll(batch);
    } catch (error) {
      logger.error({ err: error, entries: batch.length }, 'response cache write failed; entries dropped');
    }
    pending.clear();
    pendingBytes = 0;
  }

  return {
    /** Queues an entry; it answers lookups at once and reaches the disk with the next batch. */
    put(entry: CacheEntry): boolean {
      const size = entrySize(entry);
      const previous = pending.get(entry.cacheKey);
      if (pendingBytes + size - (previous ? entrySize(previous) : 0) > limits.maxPendingBytes) {
        if (dropped++ % 1000 === 0) logger.warn({ dropped }, 'response cache write queue full; entries dropped');
        return false;
      }
      if (previous) pendingBytes -= entrySize(previous);
      pending.set(entry.cacheKey, entry);
      pendingBytes += size;
      if (pending.size >= limits.flushBatchSize) flush();
      else schedule();
      return true;
    },

    /** The stored answer for a key within its organisation and workspace, expired or not (the caller decides). */
    get(
      cacheKey: string,
      organisationId: string,
      workspaceId: string,
    ): { createdAt: number; expiresAt: number; response: CachedResponse } | null {
      const queued = pending.get(cacheKey);
      if (queued) {
        return queued.organisationId === organisationId && queued.workspaceId === workspaceId
          ? { createdAt: queued.createdAt, expiresAt: queued.expiresAt, response: queued.response }
          : null;
      }
      const row = selectResponse.get(cacheKey, organisationId, workspaceId);
      if (!row) return null;
      return {
        createdAt: Date.parse(row.created_at),
        expiresAt: Date.parse(row.expires_at),
        response: {
          status: row.status,
          headers: JSON.parse(row.headers) as Record<string, string>,
          body: row.body,
          stream: row.is_stream === 1,
          provider: row.provider,
        },
      };
    },

    /** The unit embedding of a semantic entry, for the exact comparison after the sketch filter. */
    embedding(cacheKey: string): Float32Array | null {
      const queued = pending.get(cacheKey);
      if (queued) return queued.semantic?.embedding ?? null;
      const bytes = selectEmbedding.get(cacheKey) as Buffer | null | undefined;
      return bytes ? bufferToVector(bytes) : null;
    },

    /** One page of the live rows of a semantic partition, newest expiry first; `next` is null after the last page. */
    loadPartitionPage(
      partitionKey: string,
      now: number,
      after: PartitionCursor | null,
      limit: number,
    ): { rows: PartitionRow[]; next: PartitionCursor | null } {
      const nowIso = new Date(now).toISOString();
      const raw =
        after === null
          ? selectPartitionFirst.all(partitionKey, nowIso, limit)
          : selectPartitionNext.all(partitionKey, nowIso, ...after, limit);
      const rows = raw.map(([expiresAt, createdAt, cacheKey, sketch]) => ({
        cacheKey,
        createdAt: Date.parse(createdAt),
        expiresAt: Date.parse(expiresAt),
        sketch,
      }));
      const last = raw[raw.length - 1];
      return { rows, next: raw.length === limit && last ? [last[0], last[1], last[2]] : null };
    },

    /** Semantic entries of a partition not yet written. */
    pendingOfPartition(partitionKey: string): PartitionRow[] {
      const rows: PartitionRow[] = [];
      for (const entry of pending.values()) {
        if (entry.semantic?.partitionKey === partitionKey) {
          rows.push({
            cacheKey: entry.cacheKey,
            createdAt: entry.createdAt,
            expiresAt: entry.expiresAt,
            sketch: entry.semantic.sketch,
          });
        }
      }
      return rows;
    },

    /**
     * Deletes expired rows in small batches, yielding between them, then the rows closest to
     * expiry beyond `maxStoredEntries`. Returns how many rows went.
     */
    async purge(now: number): Promise<number> {
      flush();
      const cutoff = new Date(now).toISOString();
      let deleted = 0;
      for (;;) {
        const { changes } = purgeBatch.run(cutoff, limits.purgeBatchSize);
        deleted += changes;
        if (changes < limits.purgeBatchSize) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      let excess = countRows.get()! - limits.maxStoredEntries;
      while (excess > 0) {
        const { changes } = trimBatch.run(Math.min(excess, limits.purgeBatchSize));
        if (changes === 0) break;
        deleted += changes;
        excess -= changes;
        await new Promise((resolve) => setImmediate(resolve));
      }
      return deleted;
    },

    flush,
    get pendingCount(): number {
      return pending.size;
    },
  };
}

export type CacheStore = ReturnType<typeof createCacheStore>;
