/**
 * Guardrail feedback gathered over one turn of the event loop and written with one insert:
 * every guardrail with a feedback weight gives a row per request, and a statement built and
 * prepared per row cost more than the checks themselves. A batch the database refuses is
 * written again row by row, so that one bad row costs only itself, as when each had its own.
 */
export interface FeedbackBatcher<T> {
  add(entry: T): void;
  /** Writes whatever is waiting (at shutdown, in tests). */
  flush(): Promise<void>;
}

/** Rows per insert: far under PostgreSQL's bind-parameter limit at ten columns a row. */
export const MAX_FEEDBACK_BATCH = 500;

export function createFeedbackBatcher<T>(deps: {
  writeMany(entries: T[]): Promise<unknown>;
  writeOne(entry: T): Promise<unknown>;
  onError(error: unknown): void;
}): FeedbackBatcher<T> {
  let queued: T[] = [];
  let scheduled = false;
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
    scheduled = false;
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
      if (scheduled) return;
      scheduled = true;
      setImmediate(drain);
    },
    async flush() {
      drain();
      await Promise.all([...inFlight]);
    },
  };
}
