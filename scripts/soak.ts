import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { PACKAGE_ROOT } from '../src/lib/package-root.js';
import type { LoadTarget } from './bench/load.js';
import { GC_PREFIX, PROBE_PREFIX, type ProbeGc, type ProbeSample } from './bench/loop-probe.js';
import { machine, memory } from './bench/proc.js';
import { killAllNow, startNode, stopAll, type BenchChild } from './bench/processes.js';
import { machineLine } from './bench/report.js';
import { childEnv, createWorkspaceKey, enableLimits, preflight, targetsFor } from './bench/setup.js';
import {
  idleHeapLine,
  judgeIdleHeap,
  judgeLiveHeap,
  judgeRss,
  liveHeapLine,
  memoryHeadline,
  verdictLine,
  type IdleBracket,
  type RssSample,
} from './soak-verdict.js';
import { parseCommandLine, settingsEnv } from './bench/command-line.js';

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
 * judges the live heap after each major collection during the load (the probe reads it in a GC
 * observer): what a leak in JavaScript raises, whatever the GC's timing; but at 50 requests/s V8
 * collects minutes apart, so a 10-minute soak sees one or two. Hence the idle brackets: right
 * after warm-up the load pauses (nothing new sent, the requests in flight come back) until svcgw's
 * own idle collector runs a full GC on the idle server (src/server/idle-collector.ts, 10–20 s
 * later; the soak never forces one), then resumes where its schedule left off; at the end it waits
 * the same way. The live heap after those two collections, alike at both ends, is the headline's
 * evidence for the JavaScript heap. Samples taken in the pauses count in no series nor worst figure.
 * A headline above the lines says which memory grew, or that RSS alone did (GC timing, not a
 * leak), or that it could not tell.
 * Everything listens on 127.0.0.1; nothing is asserted.
 *
 *   node dist/scripts/soak.js [--duration 600] [--rate 50] [--stream-share 0.5] [--interval 30] [--warmup S] [--idle-wait 60] [--node-flags="…"] [--setting name=value ...]
 */
const USAGE =
  'usage: node dist/scripts/soak.js [--duration SECONDS (600)] [--rate REQUESTS/S (50)] [--stream-share 0..1 (0.5)] [--interval SECONDS (30)] [--warmup SECONDS (min(120, duration/4))] [--idle-wait SECONDS (60; 0: no idle brackets)] [--max-in-flight N (32)] [--node-flags="--heap-growing-percent=0 ..."] [--setting name=value ...]';
const { values } = parseCommandLine('soak', USAGE, {
  options: {
    duration: { type: 'string', default: '600' },
    rate: { type: 'string', default: '50' },
    'stream-share': { type: 'string', default: '0.5' },
    interval: { type: 'string', default: '30' },
    warmup: { type: 'string' },
    'idle-wait': { type: 'string', default: '60' },
    'max-in-flight': { type: 'string', default: '32' },
    'node-flags': { type: 'string', default: '' },
    setting: { type: 'string', multiple: true, default: [] },
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
/** How long each idle bracket waits for svcgw's idle collection before giving up; 0: no brackets. */
const idleWaitS = option('idle-wait', values['idle-wait'], 0, 600);
const maxInFlight = Math.floor(option('max-in-flight', values['max-in-flight'], 1, 256));
/** Extra `node` flags for the gateway (V8 or GC settings to compare), as in `npm run bench`. */
const gatewayNodeFlags = values['node-flags'].split(/\s+/).filter(Boolean);
const gatewaySettings = settingsEnv(values.setting, (problem) => {
  process.stderr.write(`soak: ${problem}\n${USAGE}\n`);
  process.exit(2);
});

const BIN = join(PACKAGE_ROOT, 'bin', 'svcgw');
const MOCK = fileURLToPath(new URL('./mock-provider.js', import.meta.url));
const PROBE = pathToFileURL(fileURLToPath(new URL('./bench/loop-probe.js', import.meta.url))).href;
/** RSS is read from /proc this often; the printed lines and the verdict use these samples. */
const RSS_SAMPLE_MS = 5000;
/** The probe's sampling period: a probe sample covers this much time before it. */
const PROBE_MS = 5000;

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
    `${durationS} s at ${rate} requests/s (${Math.round(streamShare * 100)} % streams), at most ${maxInFlight} in flight; a line every ${intervalS} s; warm-up ${warmupS} s${idleWaitS > 0 ? `; after warm-up and at the end, idle until svcgw's idle GC (at most ${idleWaitS} s, not counted in the duration)` : ''}\n`,
  );
  const env = childEnv();
  const adminKey = randomBytes(20).toString('hex');
  const mock = await startNode({ name: 'mock provider', args: [MOCK, '--port', '0'], cwd: PACKAGE_ROOT, env });
  children.push(mock);
  dataDir = mkdtempSync(join(tmpdir(), 'svcgw-soak-'));
  // The probe's 5-second samples since the last printed line (those overlapping an idle pause
  // marked), and the worst delay after warm-up outside the pauses.
  let probes: Array<ProbeSample & { inPause: boolean }> = [];
  let probeWorst = 0;
  let warm = false;
  /** The idle pauses, seconds since the load started (wall clock); `toS` null while one lasts. */
  const pauses: Array<{ fromS: number; toS: number | null }> = [];
  /** Seconds of pause between two times (seconds since the load started). */
  const pausedBetween = (fromS: number, toS: number) =>
    pauses.reduce((a, p) => a + Math.max(0, Math.min(toS, p.toS ?? Infinity) - Math.max(fromS, p.fromS)), 0);
  /** Anonymous RSS less V8's heapTotal at each probe sample once the load runs: memory outside the JavaScript heap. */
  const outsideV8: RssSample[] = [];
  let loadStart: number | null = null;
  /** Seconds of load (the pauses taken out) at a time in seconds since the load started. */
  const loadS = (atS: number) => atS - pausedBetween(0, atS);
  /** Each major collection by its ordinal: the live heap it left, and when it ended (ms since the epoch). */
  const majorGcs = new Map<number, { atMs: number; mb: number; forced: boolean }>();
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
    env: {
      ...env,
      ...gatewaySettings,
      SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey,
      SVCGW_LOG_LEVEL: 'warn',
      LOOP_PROBE_MS: '5000',
    },
    onLine: (line) => {
      try {
        if (line.startsWith(GC_PREFIX)) {
          const gc = JSON.parse(line.slice(GC_PREFIX.length)) as ProbeGc;
          majorGcs.set(gc.n, { atMs: gc.atMs, mb: gc.liveHeapMb, forced: gc.forced });
          return;
        }
        if (!line.startsWith(PROBE_PREFIX)) return;
        const sample = JSON.parse(line.slice(PROBE_PREFIX.length)) as ProbeSample;
        // A GC line cut short: the next sample still carries that collection.
        if (sample.liveHeapAfterMajorGcMb !== null && sample.lastMajorGcAtMs !== null && !majorGcs.has(sample.majorGcs))
          majorGcs.set(sample.majorGcs, {
            atMs: sample.lastMajorGcAtMs,
            mb: sample.liveHeapAfterMajorGcMb,
            forced: sample.lastMajorGcForced ?? false,
          });
        const nowS = loadStart === null ? null : (performance.now() - loadStart) / 1000;
        // The idle collection shrinks the heap and blocks the loop: a sample covering any of a pause is not the load's.
        const inPause = nowS !== null && pausedBetween(nowS - PROBE_MS / 1000, nowS) > 0;
        probes.push({ ...sample, inPause });
        if (nowS !== null && !inPause) outsideV8.push({ atS: loadS(nowS), mb: sample.anonMb - sample.heapTotalMb });
        if (warm && !inPause) probeWorst = Math.max(probeWorst, sample.delayMaxMs);
      } catch {
        // a line cut short: the next one comes in 5 s
      }
    },
  });
  children.push(gateway);
  process.stdout.write(
    `mock provider pid ${mock.pid} at ${mock.url}; gateway pid ${gateway.pid} at ${gateway.url}${gatewayNodeFlags.length > 0 ? ` (node ${gatewayNodeFlags.join(' ')})` : ''}${values.setting.length > 0 ? ` (settings ${values.setting.join(' ')})` : ''}\n`,
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
  const paused = () => pauses.some((p) => p.toS === null);
  /** Seconds since the load started of a time in ms since the epoch (the probe's clock is the machine's). */
  const sinceStartS = (atMs: number) => (atMs - (performance.timeOrigin + start)) / 1000;
  // Open loop: requests leave on schedule whether or not earlier ones have come back (up to the cap).
  // The schedule runs on load time, so requests not sent during a pause are not caught up after it.
  const tick = setInterval(() => {
    if (paused()) return;
    const due = Math.min(Math.floor(loadS(elapsedS()) * rate), Math.floor(durationS * rate));
    for (; scheduled < due; scheduled++) {
      if (inFlight >= maxInFlight) {
        window.skipped += 1;
        continue;
      }
      send((scheduled % 100) / 100 < streamShare ? stream : chat);
    }
  }, 10);
  const sampler = setInterval(() => {
    const now = elapsedS();
    // Not in a pause nor just after one: the idle collection emptied the heap, which refills under the load.
    if (pausedBetween(now - RSS_SAMPLE_MS / 1000, now) === 0)
      rss.push({ atS: loadS(now), mb: memory(gateway.pid).rssMb });
    warm = loadS(now) >= warmupS;
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
    const sorted = w.latencies.sort((a, b) => a - b);
    const mem = memory(gateway.pid);
    lastProbe = probes.at(-1) ?? lastProbe;
    const p = lastProbe;
    const loaded = probes.filter((x) => !x.inPause);
    const delay = (key: 'delayP99Ms' | 'delayMaxMs') => Math.max(...loaded.map((x) => x[key]));
    const delayP50 = pick(
      loaded.map((x) => x.delayP50Ms).sort((a, b) => a - b),
      0.5,
    );
    const pausedS = pausedBetween(lastReportS, elapsedS());
    lastReportS = elapsedS();
    const line = [
      `t=${elapsedS().toFixed(0).padStart(5)} s${pausedS > 0 ? ` (idle pause ${pausedS.toFixed(0)} s)` : ''}`,
      `ok ${String(w.ok).padStart(6)}`,
      `failed ${w.failed}`,
      `skipped ${w.skipped}`,
      `p50 ${fmt(pick(sorted, 0.5))} ms`,
      `p99 ${fmt(pick(sorted, 0.99))} ms`,
      `RSS ${mem.rssMb.toFixed(1)} MB (peak ${mem.peakRssMb.toFixed(1)})`,
      p ? `heap ${p.heapUsedMb.toFixed(1)}/${p.heapTotalMb.toFixed(1)} MB` : 'heap -',
      p ? `outside V8 ${(p.anonMb - p.heapTotalMb).toFixed(1)} MB` : 'outside V8 -',
      liveAfterGc(),
      loaded.length > 0
        ? `loop delay p50 ${fmt(delayP50)} p99 ${fmt(delay('delayP99Ms'))} max ${fmt(delay('delayMaxMs'))} ms`
        : `loop delay: no probe sample ${probes.length > 0 ? 'outside the idle pause ' : ''}in this interval`,
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
    return `live after major GC ${gc.mb.toFixed(1)} MB (#${n}${gc.forced ? ' forced' : ''}, ${Math.max(0, elapsedS() - sinceStartS(gc.atMs)).toFixed(0)} s ago)`;
  };
  const reporter = setInterval(() => report(), intervalS * 1000);

  const bothAlive = () => gateway.alive() && mock.alive();
  /** Resolves with whether `done()` came to hold: polled until then, `limitMs`, or a child exiting. */
  const waitFor = (done: () => boolean, limitMs = Infinity) =>
    new Promise<boolean>((resolve) => {
      const until = performance.now() + limitMs;
      const check = setInterval(() => {
        const ok = done();
        if (ok || !bothAlive() || performance.now() >= until) {
          clearInterval(check);
          resolve(ok);
        }
      }, 100);
    });
  /**
   * An idle bracket: no new request from now (a pause begins), the ones in flight come back, then
   * svcgw's idle collector runs a full GC on the idle server: the first forced major collection
   * that ended after both, whose live heap is the bracket's figure. Gives up after `idleWaitS`.
   */
  const idleBracket = async (what: string, then: string): Promise<IdleBracket> => {
    const fromS = elapsedS();
    pauses.push({ fromS, toS: null });
    const limitMs = idleWaitS * 1000;
    const drained = await waitFor(() => inFlight === 0, limitMs);
    const drainedS = elapsedS() - fromS;
    const quietAtMs = performance.timeOrigin + performance.now();
    const idleGc = () => [...majorGcs].sort(([a], [b]) => a - b).find(([, gc]) => gc.forced && gc.atMs > quietAtMs);
    const found = drained && (await waitFor(() => idleGc() !== undefined, limitMs - drainedS * 1000));
    const gc = found ? idleGc() : undefined;
    if (gc) {
      const [n, { atMs, mb }] = gc;
      const waitedS = sinceStartS(atMs) - fromS;
      process.stdout.write(
        `idle ${what}: svcgw's idle GC #${n} ${waitedS.toFixed(0)} s after the load paused (nothing in flight after ${drainedS.toFixed(1)} s): live heap ${mb.toFixed(1)} MB; ${then}\n`,
      );
      return { mb, waitedS };
    }
    const waitedS = elapsedS() - fromS;
    const byV8 = [...majorGcs.values()].filter((x) => !x.forced && sinceStartS(x.atMs) > fromS).length;
    process.stdout.write(
      `idle ${what}: NO idle GC within ${waitedS.toFixed(0)} s of the load pausing (${drained ? `nothing in flight after ${drainedS.toFixed(1)} s` : `${inFlight} requests still in flight`}; ${byV8} major GCs started by V8 meanwhile); ${then}\n`,
    );
    return { mb: null, waitedS };
  };

  let afterWarmup: IdleBracket | undefined;
  let atEnd: IdleBracket | undefined;
  if (idleWaitS > 0 && (await waitFor(() => loadS(elapsedS()) >= warmupS))) {
    afterWarmup = await idleBracket('after warm-up', 'the load resumes');
    pauses.at(-1)!.toS = elapsedS();
  }
  await waitFor(() => loadS(elapsedS()) >= durationS && (idleWaitS > 0 || inFlight === 0));
  clearInterval(tick);
  const stopS = elapsedS();
  rss.push({ atS: loadS(stopS), mb: memory(gateway.pid).rssMb });
  if (idleWaitS > 0 && bothAlive()) {
    atEnd = await idleBracket('at the end', 'the soak ends');
    pauses.at(-1)!.toS = elapsedS();
  }
  clearInterval(sampler);
  clearInterval(reporter);
  report(true);
  await pool.close();

  const gone = [mock, gateway].find((child) => !child.alive());
  if (gone) {
    process.stdout.write(`\nSOAK ABORTED: ${gone.name} (pid ${gone.pid}) exited; its last output:\n${gone.output()}\n`);
    process.exitCode = 1;
    return;
  }
  const pausesS = pauses.map((p) => (p.toS! - p.fromS).toFixed(0));
  process.stdout.write(
    `\ntotal: ${total.ok} ok, ${total.failed} failed, ${total.skipped} skipped (gateway behind); worst event-loop delay after warm-up ${fmt(probeWorst)} ms${pausesS.length > 0 ? ` (idle pauses of ${pausesS.join(' and ')} s left out)` : ''}\n`,
  );
  const rssAfter = rss.filter((s) => s.atS >= warmupS);
  const outsideAfter = outsideV8.filter((s) => s.atS >= warmupS);
  // The major collections V8 started during the load: none in a pause, none after it stopped.
  const inPause = (atS: number) => pauses.some((p) => atS >= p.fromS && atS <= (p.toS ?? Infinity));
  const liveAfter = [...majorGcs]
    .sort(([a], [b]) => a - b)
    .map(([, gc]) => ({ atS: sinceStartS(gc.atMs), mb: gc.mb }))
    .filter((gc) => gc.atS <= stopS && !inPause(gc.atS))
    .map((gc) => ({ atS: loadS(gc.atS), mb: gc.mb }))
    .filter((gc) => gc.atS >= warmupS);
  const periodS = loadS(stopS) - warmupS;
  // undefined: no brackets (--idle-wait 0); null: a bracket's collection did not come.
  const idleHeap = afterWarmup && atEnd ? judgeIdleHeap(afterWarmup, atEnd) : undefined;
  const lines = [
    afterWarmup && atEnd && idleHeapLine(afterWarmup, atEnd),
    idleHeap
      ? liveHeapLine(liveAfter, periodS, 'live heap after each major GC during the load', 'the idle brackets judge')
      : liveHeapLine(liveAfter, periodS),
    verdictLine(outsideAfter, intervalS, 'memory outside the V8 heap (anonymous RSS less heapTotal)'),
    verdictLine(rssAfter, intervalS, "RSS (follows the V8 heap's sizing, so GC timing)"),
  ].filter(Boolean);
  const headline = memoryHeadline({
    liveHeap: judgeLiveHeap(liveAfter, periodS),
    idleHeap,
    outsideV8: judgeRss(outsideAfter, intervalS),
    rss: judgeRss(rssAfter, intervalS),
  });
  process.stdout.write(`${headline}\n${lines.map((l) => `  ${l}\n`).join('')}`);
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
