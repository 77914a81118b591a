import { readFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

/**
 * Loaded into the gateway by `npm run soak` (`node --import …/loop-probe.js bin/svcgw serve`),
 * so that svcgw itself needs no metric for it: every `LOOP_PROBE_MS` (default 5000) ms, one
 * stderr line `LOOP_PROBE {...}` with the event-loop delay since the previous line and the
 * process's own memory figures; and after each major (mark-compact) garbage collection, one line
 * `LOOP_PROBE_GC {...}` with the live heap it left. Main thread only (workers inherit `--import`).
 * It only watches: it never triggers a collection, so the gateway runs as users run it (the
 * collections svcgw's idle collector forces are reported as such, `forced`).
 */
export const PROBE_PREFIX = 'LOOP_PROBE ';
/** Prefix of the line written after each major collection (distinct from `PROBE_PREFIX`, which ends in a space). */
export const GC_PREFIX = 'LOOP_PROBE_GC ';
/** Sampling resolution of the delay histogram; a sample is the time between two ticks, so this is taken off. */
export const RESOLUTION_MS = 10;

export interface ProbeSample {
  /** Event-loop delay beyond the resolution, ms, since the previous sample. */
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  rssMb: number;
  /** Anonymous resident memory (`RssAnon` of /proc/self/status): RSS less the program's files; NaN off Linux. */
  anonMb: number;
  /** Major collections since the probe started. */
  majorGcs: number;
  /** The latest of them (as in `ProbeGc`); null before the first. */
  liveHeapAfterMajorGcMb: number | null;
  lastMajorGcAtMs: number | null;
  lastMajorGcForced: boolean | null;
}

/** One major collection, as the `LOOP_PROBE_GC` line reports it. */
export interface ProbeGc {
  /** Its ordinal since the probe started (1, 2, …), so that a reader can tell a line it missed. */
  n: number;
  /** V8's used heap right after it (all spaces): what was still reachable, plus what marking could not yet free. */
  liveHeapMb: number;
  heapTotalMb: number;
  /** Wall-clock time it ended, ms since the epoch (comparable across processes on one machine). */
  atMs: number;
  /** Its final, stop-the-world pause, ms (incremental marking before it is not counted). */
  pauseMs: number;
  /** Forced (`gc()`, as svcgw's idle collector runs it), not started by V8 itself. */
  forced: boolean;
}

/** `RssAnon` from /proc/self/status, MB. */
function anonymousRssMb(): number {
  try {
    const kb = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kb === undefined ? NaN : Number(kb) / 1024;
  } catch {
    return NaN;
  }
}

if (isMainThread && process.env.LOOP_PROBE_MS !== undefined) {
  const everyMs = Math.max(100, Number(process.env.LOOP_PROBE_MS) || 5000);
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  const ms = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  const mb = (bytes: number) => bytes / (1024 * 1024);

  // The heap's size between major collections is a sawtooth whose teeth can last minutes at a
  // modest rate, so a reading at a fixed time says where in a tooth it fell. The heap right after
  // a mark-compact is what survived it: a leak in JavaScript raises that, the sawtooth does not.
  // The observer's callback runs on the main thread after the collection (0.2–15 ms after it
  // ended, measured), so the figure read there is the post-collection one: checked against
  // `node --trace-gc` on a synthetic load, the callback's used_heap_size matched V8's own
  // "Mark-Compact 128.6 (161.4) -> 32.1 (162.9) MB" after-figure within 0–1 MB (32.1, 28.4 for
  // 28.2, 34.3 for 33.6 when the callback ran 15 ms later), while heapUsed just before was 78–160 MB.
  let last: ProbeGc | null = null;
  let majorGcs = 0;
  new PerformanceObserver((list) => {
    // Read first, before this callback allocates anything.
    const heap = getHeapStatistics();
    for (const entry of list.getEntries()) {
      const detail = (entry as { detail?: { kind?: number; flags?: number } }).detail;
      if (detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      majorGcs += 1;
      last = {
        n: majorGcs,
        liveHeapMb: mb(heap.used_heap_size),
        heapTotalMb: mb(heap.total_heap_size),
        atMs: performance.timeOrigin + entry.startTime + entry.duration,
        pauseMs: entry.duration,
        forced: ((detail.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0,
      };
      process.stderr.write(`${GC_PREFIX}${JSON.stringify(last)}\n`);
    }
  }).observe({ entryTypes: ['gc'] });

  setInterval(() => {
    const memory = process.memoryUsage();
    const sample: ProbeSample = {
      delayP50Ms: ms(histogram.percentile(50)),
      delayP99Ms: ms(histogram.percentile(99)),
      delayMaxMs: ms(histogram.max),
      heapUsedMb: mb(memory.heapUsed),
      heapTotalMb: mb(memory.heapTotal),
      externalMb: mb(memory.external),
      rssMb: mb(memory.rss),
      anonMb: anonymousRssMb(),
      majorGcs,
      liveHeapAfterMajorGcMb: last?.liveHeapMb ?? null,
      lastMajorGcAtMs: last?.atMs ?? null,
      lastMajorGcForced: last?.forced ?? null,
    };
    histogram.reset();
    process.stderr.write(`${PROBE_PREFIX}${JSON.stringify(sample)}\n`);
  }, everyMs).unref();
}
