import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { PACKAGE_ROOT } from '../src/lib/package-root.js';
import type { LoadTarget } from './bench/load.js';
import { GC_PREFIX, PROBE_PREFIX, type ProbeGc, type ProbeSample } from './bench/loop-probe.js';
import { machine, memory } from './bench/proc.js';
import { killAllNow, startNode, stopAll, type BenchChild } from './bench/processes.js';
import { machineLine } from './bench/report.js';
import { childEnv, createWorkspaceKey, enableLimits, preflight, targetsFor } from './bench/setup.js';
import { judgeLiveHeap, judgeRss, liveHeapLine, memoryHeadline, verdictLine, type RssSample } from './soak-verdict.js';

/**
 * `npm run soak`: a modest, steady rate of chat completions, streams and non-streams mixed,
 * through svcgw (workspace key, rate-limits and usage-limits policies, request logs on, as in
 * `npm run bench`) to the mock provider, for `--duration` seconds. Every `--interval` seconds it
 * prints the gateway's RSS (from /proc) and event-loop delay (from a probe loaded into the
 * gateway with `node --import`, scripts/bench/loop-probe.ts); at the end, one line saying
 * whether RSS grew after the warm-up: whether its floor rose, not its mean (soak-verdict.ts).
 * A second line judges the memory outside the V8 heap (anonymous RSS less V8's heapTotal, from
 * the probe) the same way: RSS follows the heap's sizing, which moves with the collector's
 * timing, while growth there is native (SQLite's page cache, malloc's arenas, buffers). A third
 * judges the live heap after each major collection (the probe reads it in a GC observer; no
 * collection is forced): what a leak in JavaScript raises, whatever the GC's timing. A headline
 * above them says which memory grew, or that RSS alone did (GC timing, not a leak), or that too
 * few major collections happened to tell.
 * Everything listens on 127.0.0.1; nothing is asserted.
 *
 *   node dist/scripts/soak.js [--duration 600] [--rate 50] [--stream-share 0.5] [--interval 30] [--warmup S] [--node-flags "…"]
 */
const USAGE =
  'usage: node dist/scripts/soak.js [--duration SECONDS (600)] [--rate REQUESTS/S (50)] [--stream-share 0..1 (0.5)] [--interval SECONDS (30)] [--warmup SECONDS (min(120, duration/4))] [--max-in-flight N (32)] [--node-flags "--heap-growing-percent=0 ..."]';
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '600' },
    rate: { type: 'string', default: '50' },
    'stream-share': { type: 'string', default: '0.5' },
    interval: { type: 'string', default: '30' },
    warmup: { type: 'string' },
    'max-in-flight': { type: 'string', default: '32' },
    'node-flags': { type: 'string', default: '' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

/** A number option within [min, max], or exit 2 with the usage: the soak is bounded by construction. */
function option(name: keyof typeof values, value: string | undefined, min: number, max: number): number {
  const n = Number(value);
  if (value === undefined || !Number.isFinite(n) || n < min || n > max) {
    process.stderr.write(`soak: --${name} must be a number from ${min} to ${max}, got ${String(value)}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}
const durationS = option('duration', values.duration, 10, 3600);
const rate = option('rate', values.rate, 1, 1000);
const streamShare = option('stream-share', values['stream-share'], 0, 1);
const intervalS = option('interval', values.interval, 1, 600);
const warmupS = option('warmup', values.warmup ?? String(Math.min(120, durationS / 4)), 0, durationS - 1);
const maxInFlight = Math.floor(option('max-in-flight', values['max-in-flight'], 1, 256));
/** Extra `node` flags for the gateway (V8 or GC settings to compare), as in `npm run bench`. */
const gatewayNodeFlags = values['node-flags'].split(/\s+/).filter(Boolean);

const BIN = join(PACKAGE_ROOT, 'bin', 'svcgw');
const MOCK = fileURLToPath(new URL('./mock-provider.js', import.meta.url));
const PROBE = pathToFileURL(fileURLToPath(new URL('./bench/loop-probe.js', import.meta.url))).href;
/** RSS is read from /proc this often; the printed lines and the verdict use these samples. */
const RSS_SAMPLE_MS = 5000;

const children: BenchChild[] = [];
let dataDir: string | null = null;

async function cleanUp(): Promise<void> {
  await stopAll();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = null;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nsoak: ${signal}, stopping the mock provider and the gateway\n`);
    void cleanUp().finally(() => process.exit(130));
  });
}
process.once('exit', () => {
  killAllNow();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

interface Window {
  sent: number;
  ok: number;
  failed: number;
  /** Scheduled but not sent because `--max-in-flight` requests were already waiting: the gateway fell behind. */
  skipped: number;
  latencies: number[];
  failures: string[];
}
const newWindow = (): Window => ({ sent: 0, ok: 0, failed: 0, skipped: 0, latencies: [], failures: [] });

async function main(): Promise<void> {
  process.stdout.write(`svcgw soak, ${new Date().toISOString()}\n${machineLine(machine())}\n`);
  process.stdout.write(
    `${durationS} s at ${rate} requests/s (${Math.round(streamShare * 100)} % streams), at most ${maxInFlight} in flight; a line every ${intervalS} s; warm-up ${warmupS} s\n`,
  );
  const env = childEnv();
  const adminKey = randomBytes(20).toString('hex');
  const mock = await startNode({ name: 'mock provider', args: [MOCK, '--port', '0'], cwd: PACKAGE_ROOT, env });
  children.push(mock);
  dataDir = mkdtempSync(join(tmpdir(), 'svcgw-soak-'));
  // The probe's 5-second samples since the last printed line, and the worst delay after warm-up.
  let probes: ProbeSample[] = [];
  let probeWorst = 0;
  let warm = false;
  /** Anonymous RSS less V8's heapTotal at each probe sample once the load runs: memory outside the JavaScript heap. */
  const outsideV8: RssSample[] = [];
  let loadStart: number | null = null;
  /** Each major collection by its ordinal: the live heap it left, and when it ended (ms since the epoch). */
  const majorGcs = new Map<number, { atMs: number; mb: number }>();
  const gateway = await startNode({
    name: 'svcgw serve',
    args: [
      ...gatewayNodeFlags,
      '--import',
      PROBE,
      BIN,
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--data-dir',
      dataDir,
    ],
    cwd: PACKAGE_ROOT,
    env: { ...env, SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey, SVCGW_LOG_LEVEL: 'warn', LOOP_PROBE_MS: '5000' },
    onLine: (line) => {
      try {
        if (line.startsWith(GC_PREFIX)) {
          const gc = JSON.parse(line.slice(GC_PREFIX.length)) as ProbeGc;
          majorGcs.set(gc.n, { atMs: gc.atMs, mb: gc.liveHeapMb });
          return;
        }
        if (!line.startsWith(PROBE_PREFIX)) return;
        const sample = JSON.parse(line.slice(PROBE_PREFIX.length)) as ProbeSample;
        probes.push(sample);
        // A GC line cut short: the next sample still carries that collection.
        if (sample.liveHeapAfterMajorGcMb !== null && sample.lastMajorGcAtMs !== null && !majorGcs.has(sample.majorGcs))
          majorGcs.set(sample.majorGcs, { atMs: sample.lastMajorGcAtMs, mb: sample.liveHeapAfterMajorGcMb });
        if (loadStart !== null)
          outsideV8.push({ atS: (performance.now() - loadStart) / 1000, mb: sample.anonMb - sample.heapTotalMb });
        if (warm) probeWorst = Math.max(probeWorst, sample.delayMaxMs);
      } catch {
        // a line cut short: the next one comes in 5 s
      }
    },
  });
  children.push(gateway);
  process.stdout.write(
    `mock provider pid ${mock.pid} at ${mock.url}; gateway pid ${gateway.pid} at ${gateway.url}${gatewayNodeFlags.length > 0 ? ` (node ${gatewayNodeFlags.join(' ')})` : ''}\n`,
  );

  const workspaceKey = await createWorkspaceKey(gateway.url, adminKey);
  await enableLimits(gateway.url, adminKey);
  const endpoints = { mockUrl: mock.url, gatewayUrl: gateway.url, gatewayKey: workspaceKey };
  const chat = targetsFor('chat', endpoints).gateway;
  const stream = targetsFor('stream', endpoints).gateway;
  await preflight('chat via gateway', chat);
  await preflight('stream via gateway', stream);
  process.stdout.write('gateway: workspace key, a rate-limits and a usage-limits policy, request logs on\n\n');

  const pool = new Pool(gateway.url, { connections: maxInFlight, keepAliveTimeout: 60_000 });
  let window = newWindow();
  let total = newWindow();
  let inFlight = 0;
  let scheduled = 0;
  const send = (target: LoadTarget) => {
    const started = performance.now();
    inFlight += 1;
    window.sent += 1;
    // Counted in the window where the answer ends, so a report never misses one in flight.
    const fail = (message: string) => {
      window.failed += 1;
      if (window.failures.length < 3) window.failures.push(message);
    };
    void pool
      .request({ path: target.path, method: 'POST', headers: target.headers, body: target.body })
      .then(async ({ statusCode, headers, body }) => {
        const text = await body.text();
        if (statusCode === 200 && target.check(text, headers)) {
          window.ok += 1;
          window.latencies.push(performance.now() - started);
        } else {
          fail(`HTTP ${statusCode}: ${text.slice(0, 200)}`);
        }
      })
      .catch((error: unknown) => fail((error as Error).message))
      .finally(() => (inFlight -= 1));
  };

  const rss: Array<{ atS: number; mb: number }> = [];
  const start = performance.now();
  loadStart = start;
  const elapsedS = () => (performance.now() - start) / 1000;
  /** Seconds since the load started of a time in ms since the epoch (the probe's clock is the machine's). */
  const sinceStartS = (atMs: number) => (atMs - (performance.timeOrigin + start)) / 1000;
  // Open loop: requests leave on schedule whether or not earlier ones have come back (up to the cap).
  const tick = setInterval(() => {
    const due = Math.min(Math.floor(elapsedS() * rate), Math.floor(durationS * rate));
    for (; scheduled < due; scheduled++) {
      if (inFlight >= maxInFlight) {
        window.skipped += 1;
        continue;
      }
      send((scheduled % 100) / 100 < streamShare ? stream : chat);
    }
  }, 10);
  const sampler = setInterval(() => {
    rss.push({ atS: elapsedS(), mb: memory(gateway.pid).rssMb });
    warm = elapsedS() >= warmupS;
  }, RSS_SAMPLE_MS);
  rss.push({ atS: 0, mb: memory(gateway.pid).rssMb });

  let lastProbe: ProbeSample | undefined;
  let lastReportS = 0;
  /** One printed line for the window since the last; `final` folds a short tail (< 1 s) into the totals silently. */
  const report = (final = false) => {
    const w = window;
    window = newWindow();
    total = merge(total, w);
    if (final && elapsedS() - lastReportS < 1 && w.failures.length === 0) return;
    lastReportS = elapsedS();
    const sorted = w.latencies.sort((a, b) => a - b);
    const mem = memory(gateway.pid);
    lastProbe = probes.at(-1) ?? lastProbe;
    const p = lastProbe;
    const delay = (key: 'delayP99Ms' | 'delayMaxMs') => Math.max(...probes.map((x) => x[key]));
    const delayP50 = pick(
      probes.map((x) => x.delayP50Ms).sort((a, b) => a - b),
      0.5,
    );
    const line = [
      `t=${elapsedS().toFixed(0).padStart(5)} s`,
      `ok ${String(w.ok).padStart(6)}`,
      `failed ${w.failed}`,
      `skipped ${w.skipped}`,
      `p50 ${fmt(pick(sorted, 0.5))} ms`,
      `p99 ${fmt(pick(sorted, 0.99))} ms`,
      `RSS ${mem.rssMb.toFixed(1)} MB (peak ${mem.peakRssMb.toFixed(1)})`,
      p ? `heap ${p.heapUsedMb.toFixed(1)}/${p.heapTotalMb.toFixed(1)} MB` : 'heap -',
      p ? `outside V8 ${(p.anonMb - p.heapTotalMb).toFixed(1)} MB` : 'outside V8 -',
      liveAfterGc(),
      probes.length > 0
        ? `loop delay p50 ${fmt(delayP50)} p99 ${fmt(delay('delayP99Ms'))} max ${fmt(delay('delayMaxMs'))} ms`
        : 'loop delay: no probe sample in this interval',
    ].join('  ');
    probes = [];
    process.stdout.write(`${line}\n`);
    for (const f of w.failures) process.stdout.write(`    failed: ${f.replace(/\s+/g, ' ')}\n`);
  };
  /** The live heap after the latest major collection, which one, and how long ago; '–' before the first. */
  const liveAfterGc = () => {
    const n = Math.max(0, ...majorGcs.keys());
    const gc = majorGcs.get(n);
    if (!gc) return 'live after major GC –';
    return `live after major GC ${gc.mb.toFixed(1)} MB (#${n}, ${Math.max(0, elapsedS() - sinceStartS(gc.atMs)).toFixed(0)} s ago)`;
  };
  const reporter = setInterval(() => report(), intervalS * 1000);

  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (!gateway.alive() || !mock.alive()) {
        clearInterval(check);
        resolve();
      } else if (elapsedS() >= durationS && inFlight === 0) {
        clearInterval(check);
        resolve();
      }
    }, 100);
  });
  clearInterval(tick);
  clearInterval(sampler);
  clearInterval(reporter);
  rss.push({ atS: elapsedS(), mb: memory(gateway.pid).rssMb });
  report(true);
  await pool.close();

  const gone = [mock, gateway].find((child) => !child.alive());
  if (gone) {
    process.stdout.write(`\nSOAK ABORTED: ${gone.name} (pid ${gone.pid}) exited; its last output:\n${gone.output()}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(
    `\ntotal: ${total.ok} ok, ${total.failed} failed, ${total.skipped} skipped (gateway behind); worst event-loop delay after warm-up ${fmt(probeWorst)} ms\n`,
  );
  const endS = elapsedS();
  const rssAfter = rss.filter((s) => s.atS >= warmupS);
  const outsideAfter = outsideV8.filter((s) => s.atS >= warmupS);
  const liveAfter = [...majorGcs]
    .sort(([a], [b]) => a - b)
    .map(([, gc]) => ({ atS: sinceStartS(gc.atMs), mb: gc.mb }))
    .filter((s) => s.atS >= warmupS);
  const periodS = endS - warmupS;
  process.stdout.write(
    `${memoryHeadline({
      liveHeap: judgeLiveHeap(liveAfter, periodS),
      outsideV8: judgeRss(outsideAfter, intervalS),
      rss: judgeRss(rssAfter, intervalS),
    })}\n  ${liveHeapLine(liveAfter, periodS)}\n  ${verdictLine(
      outsideAfter,
      intervalS,
      'memory outside the V8 heap (anonymous RSS less heapTotal)',
    )}\n  ${verdictLine(rssAfter, intervalS, "RSS (follows the V8 heap's sizing, so GC timing)")}\n`,
  );
}

function merge(a: Window, b: Window): Window {
  return {
    sent: a.sent + b.sent,
    ok: a.ok + b.ok,
    failed: a.failed + b.failed,
    skipped: a.skipped + b.skipped,
    latencies: [],
    failures: [],
  };
}
const pick = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
const fmt = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : '-');

try {
  await main();
} catch (error) {
  process.stderr.write(`soak: ${(error as Error).stack ?? String(error)}\n`);
  for (const child of children)
    process.stderr.write(`--- last output of ${child.name} (pid ${child.pid}) ---\n${child.output()}\n`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
