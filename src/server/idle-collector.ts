import {
  constants,
  performance,
  PerformanceObserver,
  type EventLoopUtilization,
  type PerformanceEntry,
} from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How often the collector looks at the process. */
export const IDLE_CHECK_MS = 10_000;
/** An interval is idle below this share of event-loop busy time… */
export const IDLE_UTILISATION = 0.02;
/**
 * …when the JavaScript heap grew by less than this over it (background timers allocate a little),
 * and V8 collected nothing of its own accord in it (light traffic: little loop time, but garbage).
 */
export const IDLE_HEAP_GROWTH_BYTES = 1024 * 1024;
/**
 * Collections after each busy stretch. V8 gives the young generation back only at a collection
 * that finds the allocation rate low, and the first collection after busy time still counts that
 * time's allocations; the second, an interval later, finds the rate low.
 */
export const COLLECTIONS_AFTER_ACTIVITY = 2;

export interface IdleSample {
  /** Event-loop utilisation over the interval, 0..1. */
  utilisation: number;
  /** Heap growth over the interval, bytes. */
  heapGrowth: number;
  /** Collections V8 started itself in the interval (ours, forced, are not counted). */
  collections: number;
}

/**
 * Whether to collect now, and how many collections remain owed: busy intervals owe
 * `COLLECTIONS_AFTER_ACTIVITY`, idle ones pay them off one per interval, so a server that stays
 * idle collects twice and then never again until it has been busy.
 */
export function idleStep(owed: number, sample: IdleSample): { collect: boolean; owed: number } {
  const idle =
    sample.utilisation < IDLE_UTILISATION && sample.heapGrowth < IDLE_HEAP_GROWTH_BYTES && sample.collections === 0;
  if (!idle) return { collect: false, owed: COLLECTIONS_AFTER_ACTIVITY };
  if (owed > 0) return { collect: true, owed: owed - 1 };
  return { collect: false, owed: 0 };
}

/** The process's `gc()`: the one `--expose-gc` installs, or the same function from a fresh context. */
export function exposedGc(): () => void {
  const installed = (globalThis as { gc?: () => void }).gc;
  if (installed) return installed;
  // The flag applies to contexts created while it is set: only this one (and it is unset at once,
  // so that no later context or worker gets a gc global); the main context stays as it was.
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/**
 * An idle server allocates nothing, so V8 never collects: the young generation grown to 16 MB by
 * start-up or load, and the old generation's garbage, stay resident for as long as no request
 * comes (issue #19: ~30 MB of an idle `svcgw serve`). Once the event loop has been idle for a
 * whole interval after busy time, this runs a full collection, at most twice per busy stretch
 * (`idleStep`). A request arriving during one waits for it (tens of ms, only after ≥ 10 s of
 * silence); nothing runs while the server is busy. Started by `svcgw serve`; returns the stop.
 */
export function startIdleCollector(options: { intervalMs?: number; gc?: () => void } = {}): () => void {
  const gc = options.gc ?? exposedGc();
  let owed = COLLECTIONS_AFTER_ACTIVITY;
  let loop: EventLoopUtilization = performance.eventLoopUtilization();
  let heap = getHeapStatistics().used_heap_size;
  let collections = 0;
  // A `gc` entry's detail carries V8's flags; our own collections are the forced ones.
  const forced = (entry: PerformanceEntry) =>
    (((entry as { detail?: { flags?: number } }).detail?.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !==
    0;
  const observer = new PerformanceObserver((list) => {
    collections += list.getEntries().filter((entry) => !forced(entry)).length;
  });
  observer.observe({ entryTypes: ['gc'] });
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const used = getHeapStatistics().used_heap_size;
    const step = idleStep(owed, {
      utilisation: performance.eventLoopUtilization(now, loop).utilization,
      heapGrowth: used - heap,
      collections,
    });
    owed = step.owed;
    collections = 0;
    if (step.collect) gc();
    // Read after the collection, so that it does not count as the next interval's growth or busy time.
    loop = performance.eventLoopUtilization();
    heap = getHeapStatistics().used_heap_size;
  }, options.intervalMs ?? IDLE_CHECK_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    observer.disconnect();
  };
}
