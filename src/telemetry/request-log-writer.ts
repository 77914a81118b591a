import type { MaybePromise } from '../lib/maybe-promise.js';
import type { RequestLogInsert, RequestLogRepository } from '../storage/repositories/request-logs.js';
import { logAccess } from './access-log.js';
import type { Logger } from './logger.js';

/** Called synchronously with each record as it is queued; it must return at once and never throw. */
export type RequestLogListener = (record: RequestLogInsert) => void;

/** A gateway request that has begun and has no record yet: what `logs tail` shows in flight. */
export interface RequestStart {
  id: string;
  organisation_id: string;
  workspace_id: string;
  api_key_id: string;
  endpoint_type: string;
  method: string;
  path: string;
  model: string | null;
  created_at: string;
}

export type RequestStartListener = (start: RequestStart) => void;

/** Past this many unwritten records (a database that keeps failing) new ones are dropped, loudly. */
const MAX_PENDING = 100_000;
/**
 * Records per batch. 200 rather than 500: a row waiting for its batch lives through young
 * collections and is promoted to the old generation (with 500, a third of all promoted bytes under
 * load); 200 costs ~0.3 µs more CPU per row (docs/benchmarks.md, "Memory under load").
 */
export const DEFAULT_BATCH_SIZE = 200;
/**
 * A batch is written once its records hold this much text (bodies, hook results, attempts), even
 * before `batchSize` records: with `log_bodies` on, 500 records of 64 KiB bodies each would keep
 * 64 MB waiting in memory.
 */
export const DEFAULT_BATCH_CHARS = 2 * 1024 * 1024;

/** The text a record keeps alive while it waits for its batch (its fixed fields are small). */
function heldChars(record: RequestLogInsert): number {
  return (
    (record.request_body?.length ?? 0) +
    (record.response_body?.length ?? 0) +
    (record.hook_results?.length ?? 0) +
    (record.attempts?.length ?? 0) +
    (record.metadata?.length ?? 0) +
    (record.error_message?.length ?? 0)
  );
}

/**
 * Collects request log records in memory and writes them in batches, so that a gateway request
 * never waits for the disk. `flush()` writes everything pending; shutdown calls it last.
 */
export function createRequestLogWriter(deps: {
  repo: RequestLogRepository;
  logger: Logger;
  flushIntervalMs: number;
  batchSize?: number;
  /** A batch is also written once its records hold this many characters of text. */
  batchChars?: number;
  /** One `info` line per record as it is queued (`access_log`); off by default for tools and tests. */
  accessLog?: boolean;
  /** Runs before each batch is written: what must be in the database before its log records (guardrail feedback). */
  beforeWrite?: () => Promise<void>;
}) {
  const batchSize = deps.batchSize ?? DEFAULT_BATCH_SIZE;
  const batchChars = deps.batchChars ?? DEFAULT_BATCH_CHARS;
  let pending: RequestLogInsert[] = [];
  let pendingChars = 0;
  let timer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();
  let dropped = 0;
  /** Records still being completed (priced); flush waits for them so that none is lost. */
  const completing = new Set<Promise<void>>();
  /** Live followers (`GET /v1/logs/stream`); they see every record, before it reaches the database. */
  const listeners = new Set<RequestLogListener>();
  const startListeners = new Set<RequestStartListener>();

  function notify(record: RequestLogInsert): void {
    for (const listener of listeners) {
      try {
        listener(record);
      } catch (error) {
        deps.logger.warn({ err: error }, 'request log listener failed');
      }
    }
  }

  function schedule(): void {
    if (timer === null) {
      timer = setTimeout(() => void flush(), deps.flushIntervalMs);
      timer.unref();
    }
  }

  async function writeBatch(batch: RequestLogInsert[]): Promise<void> {
    try {
      await deps.beforeWrite?.();
      await deps.repo.insertBatch(batch);
    } catch (error) {
      // Keep the records for the next attempt rather than lose them.
      deps.logger.error({ err: error, records: batch.length }, 'request log batch failed; will retry');
      pending = batch.concat(pending).slice(0, MAX_PENDING);
      pendingChars = pending.reduce((sum, record) => sum + heldChars(record), 0);
      schedule();
    }
  }

  async function flush(): Promise<void> {
    if (completing.size > 0) await Promise.allSettled([...completing]);
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    const batch = pending;
    pending = [];
    pendingChars = 0;
    if (batch.length > 0) writing = writing.then(() => writeBatch(batch));
    await writing;
  }

  function enqueue(record: RequestLogInsert): void {
    if (deps.accessLog === true) logAccess(deps.logger, record);
    if (listeners.size > 0) notify(record);
    if (pending.length >= MAX_PENDING) {
      if (dropped++ % 1000 === 0) deps.logger.error({ dropped }, 'request log queue full; dropping records');
      return;
    }
    pending.push(record);
    pendingChars += heldChars(record);
    if (pending.length >= batchSize || pendingChars >= batchChars) void flush();
    else schedule();
  }

  return {
    enqueue,
    /** Queues a record that is still being completed (a flush meanwhile waits for it), or at once when it is complete. */
    enqueueWhenReady(record: MaybePromise<RequestLogInsert>): void {
      if (!(record instanceof Promise)) return enqueue(record);
      const done: Promise<void> = record
        .then(enqueue, (error: unknown) => deps.logger.error({ err: error }, 'request log record failed'))
        .finally(() => completing.delete(done));
      completing.add(done);
    },
    flush,
    /**
     * Follows records as they are queued, on this instance only. Listeners run on the gateway's
     * path, so they must not wait for anything: a slow follower drops records, never delays them.
     * Returns the function that stops following.
     */
    onRecord(listener: RequestLogListener): () => void {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    /** Announces a request as it begins, to followers only (nothing is stored); its record follows with the same id. */
    started(start: RequestStart): void {
      for (const listener of startListeners) {
        try {
          listener(start);
        } catch (error) {
          deps.logger.warn({ err: error }, 'request start listener failed');
        }
      }
    },
    /** Follows requests as they begin; the same rules as `onRecord`. */
    onStart(listener: RequestStartListener): () => void {
      startListeners.add(listener);
      return () => void startListeners.delete(listener);
    },
    get listenerCount(): number {
      return listeners.size;
    },
    /** Whether anyone follows request starts: callers skip building a `RequestStart` nobody reads. */
    get followingStarts(): boolean {
      return startListeners.size > 0;
    },
    get pendingCount(): number {
      return pending.length;
    },
  };
}

export type RequestLogWriter = ReturnType<typeof createRequestLogWriter>;
