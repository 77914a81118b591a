/**
 * Guardrail feedback gathered for a while and written with one insert: every guardrail with a
 * feedback weight gives a row per request, and a commit per row (or per event-loop turn, a row
 * or two under load) cost more than the checks themselves. Rows wait at most `delayMs` (the
 * request logs' flush interval), and whoever writes request logs flushes them first, so a log
 * record never shows up before its feedback. A batch the database refuses is written again row
 * by row, so that one bad row costs only itself, as when each had its own.
 */
export interface FeedbackBatcher<T> {
  add(entry: T): void;
  /** Writes whatever is waiting (before a request-log batch, at shutdown, in tests). */
  flush(): Promise<void>;
}

/** Rows per insert: far under PostgreSQL's bind-parameter limit at ten columns a row. */
export const MAX_FEEDBACK_BATCH = 500;

export function createFeedbackBatcher<T>(deps: {
  /** How long a row may wait for others. */
  delayMs: number;
  writeMany(entries: T[]): Promise<unknown>;
  writeOne(entry: T): Promise<unknown>;
  onError(error: unknown): void;
}): FeedbackBatcher<T> {
  let queued: T[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const inFlight = new Set<Promise<void>>();

  async function write(batch: T[]): Promise<void> {
    try {
      await deps.writeMany(batch);
    } catch (error) {
      if (batch.length === 1) return deps.onError(error);
      for (const entry of batch) await deps.writeOne(entry).catch((error: unknown) => deps.onError(error));
    }
  }

  function drain(): void {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    while (queued.length > 0) {
      const batch = queued.slice(0, MAX_FEEDBACK_BATCH);
      queued = queued.slice(MAX_FEEDBACK_BATCH);
      const done = write(batch).finally(() => inFlight.delete(done));
      inFlight.add(done);
    }
  }

  return {
    add(entry) {
      queued.push(entry);
      if (queued.length >= MAX_FEEDBACK_BATCH) return drain();
      if (timer !== null) return;
      timer = setTimeout(drain, deps.delayMs);
      // Shutdown flushes what is left; a pending batch alone keeps no process alive.
      timer.unref();
    },
    async flush() {
      drain();
      await Promise.all([...inFlight]);
    },
  };
}
