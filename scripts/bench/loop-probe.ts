import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

/**
 * Loaded into the gateway by `npm run soak` (`node --import …/loop-probe.js bin/svcgw serve`),
 * so that svcgw itself needs no metric for it: every `LOOP_PROBE_MS` (default 5000) ms, one
 * stderr line `LOOP_PROBE {...}` with the event-loop delay since the previous line and the
 * process's own memory figures. Main thread only (workers inherit `--import`).
 */
export const PROBE_PREFIX = 'LOOP_PROBE ';
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
    };
    histogram.reset();
    process.stderr.write(`${PROBE_PREFIX}${JSON.stringify(sample)}\n`);
  }, everyMs).unref();
}
