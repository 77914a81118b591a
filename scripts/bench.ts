import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { PACKAGE_ROOT } from '../src/lib/package-root.js';
import { formatSummary, mainThreadProfile, summariseCpuProfile } from './bench/cpuprofile.js';
import { readHeapBreakdown, type HeapBreakdown } from './bench/heap-breakdown.js';
import { quantile, runLoad, type LoadTarget } from './bench/load.js';
import { cpuMs, machine, machineBusyMs, memory, selfCpuMs, waitForQuiet, type Memory } from './bench/proc.js';
import { killAllNow, startNode, stopAll, type BenchChild } from './bench/processes.js';
import {
  backgroundWarning,
  checkTargets,
  derive,
  derivedLines,
  failureReport,
  failures,
  machineLine,
  medianRuns,
  ratiosTable,
  runsTable,
  targetsTable,
  type Kind,
  type RunFigures,
  type Via,
  VIAS,
} from './bench/report.js';
import { benchScaleOut, scaleOutTable, scaleOutUnavailable, type ScaleOutRun } from './bench/scale-out.js';
import { childEnv, createWorkspaceKey, enableLimits, preflight, primeCache, targetsFor } from './bench/setup.js';
import { parseCommandLine, settingsEnv } from './bench/command-line.js';

/**
 * `npm run bench`: the same chat completion sent straight to a mock provider, through a
 * do-nothing Node proxy (the floor: node:http in, undici out, nothing parsed) and through svcgw,
 * figures side by side and as ratios to the proxy's. Four processes (mock provider, proxy,
 * gateway, this load generator) share the machine's cores; one path is loaded at a time.
 * Nothing is asserted; issue #19's targets are only printed next to the figures.
 *
 *   node dist/scripts/bench.js [--seconds 10] [--warmup 5] [--max-requests 1000000] [--repeat 1]
 *                              [--scenarios chat:1,chat:32,stream:1,stream:32] [--vias LIST] [--cpu-prof DIR] [--wait-quiet 30]
 *
 * The gateway is set up as issue #19 measures it: requests carry a workspace key (not the admin
 * key), a rate-limits and a usage-limits policy cover every request (`--no-limits` leaves them
 * out, to see what they cost), and every request writes its request log row.
 * Before each run it waits (up to `--wait-quiet` seconds, 0 = never) for other processes to stop
 * using more than a fifth of a core: a shared machine running builds skews every figure.
 * `--cpu-prof DIR` runs the gateway under `node --cpu-prof` and prints its main thread's hottest
 * functions; `--node-flags="…"` starts the gateway's node with those flags (to try V8 or GC settings; with `=`, since the value begins with a dash);
 * `--setting name=value` (repeatable) gives the gateway one of its settings (`SVCGW_NAME=value`), to measure what it changes.
 * Each scenario also runs three configs through the gateway, each its own row: `guarded` (five
 * built-in input checks), `fallback` (two targets, the first answers) and `cached` (the simple
 * cache, every measured answer a hit); `--vias` chooses the paths, `--no-guardrails` leaves out
 * `guarded`. `--repeat N` runs each scenario's paths N times in turn and reports the medians.
 * Last, when PostgreSQL and Redis answer on 127.0.0.1 (or SVCGW_BENCH_POSTGRES_URL and
 * SVCGW_BENCH_REDIS_URL), chat throughput of one gateway instance against three on one database
 * and one Redis (issue #18); `--no-scale-out` leaves it out.
 */
const USAGE =
  'usage: node dist/scripts/bench.js [--seconds N] [--warmup N] [--max-requests N] [--repeat N] [--scenarios chat:1,chat:32,stream:1,stream:32] [--vias direct,proxy,gateway,guarded,fallback,cached] [--cpu-prof DIR] [--wait-quiet SECONDS] [--no-limits] [--no-guardrails] [--no-scale-out] [--node-flags="--max-semi-space-size=4 ..."] [--setting name=value ...]';
const { values } = parseCommandLine('bench', USAGE, {
  options: {
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '5' },
    'max-requests': { type: 'string', default: '1000000' },
    repeat: { type: 'string', default: '1' },
    vias: { type: 'string', default: VIAS.join(',') },
    scenarios: { type: 'string', default: 'chat:1,chat:32,stream:1,stream:32' },
    'cpu-prof': { type: 'string' },
    'wait-quiet': { type: 'string', default: '30' },
    'no-limits': { type: 'boolean', default: false },
    'no-guardrails': { type: 'boolean', default: false },
    'no-scale-out': { type: 'boolean', default: false },
    'node-flags': { type: 'string', default: '' },
    setting: { type: 'string', multiple: true, default: [] },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const measureSeconds = positive('seconds', false);
const warmupSeconds = positive('warmup', true);
const maxRequests = Math.floor(positive('max-requests', false, 10_000_000));
const repeat = Math.floor(positive('repeat', false, 100));
const waitQuietSeconds = positive('wait-quiet', true);

const SCENARIOS = parseScenarios(values.scenarios);
const VIAS_RUN = parseVias(values.vias).filter((via) => !(values['no-guardrails'] && via === 'guarded'));
const profileDir = values['cpu-prof'] === undefined ? null : resolve(values['cpu-prof']);
const gatewayNodeFlags = values['node-flags'].split(/\s+/).filter(Boolean);
const gatewaySettings = settingsEnv(values.setting, (problem) => {
  process.stderr.write(`bench: ${problem}\n${USAGE}\n`);
  process.exit(2);
});
const BIN = join(PACKAGE_ROOT, 'bin', 'svcgw');
const MOCK = fileURLToPath(new URL('./mock-provider.js', import.meta.url));
const PROXY = fileURLToPath(new URL('./bench/noop-proxy.js', import.meta.url));

const QUIET_CORES = 0.2;
const children: BenchChild[] = [];
let dataDir: string | null = null;
let gatewayPid: number | null = null;

async function cleanUp(): Promise<void> {
  await stopAll();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = null;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping the mock provider, the proxy and the gateway\n`);
    void cleanUp().finally(() => process.exit(130));
  });
}
// Last resort if something exits the process early: never leave the children running or their data behind.
process.once('exit', () => {
  killAllNow();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function main(): Promise<void> {
  const m = machine();
  const adminKey = randomBytes(20).toString('hex');
  const env = childEnv();
  process.stdout.write(`svcgw benchmark, ${new Date().toISOString()}\n${machineLine(m)}\n`);
  process.stdout.write(
    `each run: ${warmupSeconds} s warm-up (not counted) + ${measureSeconds} s measured (at most ${maxRequests} requests)\n`,
  );
  if (waitQuietSeconds === 0)
    process.stdout.write('--wait-quiet 0: runs start whatever else the machine is doing (see the "other" column)\n');
  if (m.cpus <= 4) {
    process.stdout.write(
      `note: only ${m.cpus} CPU(s) for three busy processes in every run (load generator, proxy or gateway, mock provider); they contend, so absolute figures are pessimistic. See the "cores" column.\n`,
    );
  }

  const mock = await startNode({ name: 'mock provider', args: [MOCK, '--port', '0'], cwd: PACKAGE_ROOT, env });
  children.push(mock);
  const proxy = await startNode({
    name: 'noop proxy',
    args: [PROXY, '--port', '0', '--upstream', mock.url],
    cwd: PACKAGE_ROOT,
    env,
  });
  children.push(proxy);
  dataDir = mkdtempSync(join(tmpdir(), 'svcgw-bench-'));
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const gateway = await startNode({
    name: 'svcgw serve',
    args: [
      ...gatewayNodeFlags,
      ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
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
    env: { ...env, ...gatewaySettings, SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey, SVCGW_LOG_LEVEL: 'warn' },
  });
  children.push(gateway);
  gatewayPid = gateway.pid;
  process.stdout.write(
    `mock provider pid ${mock.pid} at ${mock.url}; noop proxy pid ${proxy.pid} at ${proxy.url}; gateway pid ${gateway.pid} at ${gateway.url}${gatewayNodeFlags.length > 0 ? ` (node ${gatewayNodeFlags.join(' ')})` : ''}${values.setting.length > 0 ? ` (settings ${values.setting.join(' ')})` : ''}\n`,
  );

  const health = await request(`${gateway.url}/v1/health`);
  await health.body.text();
  if (health.statusCode !== 200) throw new Error(`gateway health check answered ${health.statusCode}`);
  // Issue #19's set-up: an application's workspace key, both kinds of limits (unless
  // --no-limits, to see what they cost), and the request log row every request writes anyway.
  const workspaceKey = await createWorkspaceKey(gateway.url, adminKey);
  if (!values['no-limits']) await enableLimits(gateway.url, adminKey);
  process.stdout.write(
    `gateway: workspace key, ${values['no-limits'] ? 'no limits (--no-limits)' : 'a rate-limits and a usage-limits policy'}, request logs on\n\n`,
  );
  const endpoints = { mockUrl: mock.url, proxyUrl: proxy.url, gatewayUrl: gateway.url, gatewayKey: workspaceKey };
  for (const kind of new Set(SCENARIOS.map((s) => s.kind)))
    for (const via of VIAS_RUN) {
      const target = targetsFor(kind, endpoints)[via];
      if (via === 'cached') await primeCache(`${kind} via ${via}`, target);
      await preflight(`${kind} via ${via}`, target);
    }
  const memoryBefore = { gateway: memory(gateway.pid), proxy: memory(proxy.pid) };
  const heapBefore = await readHeapBreakdown(gateway.url, adminKey);
  // Each process's memory right after the last window that loaded it (read in the loop below).
  const memoryAfterLoad: { gateway?: Memory; proxy?: Memory } = {};
  let heapAfterLoad: HeapBreakdown | null = null;
  const pids = { gateway: gateway.pid, proxy: proxy.pid, mock: mock.pid };

  const runs: RunFigures[] = [];
  let aborted: string | null = null;
  // Rounds of a scenario go through every path in turn, so that a machine that gets busier or
  // quieter over a minute touches every path alike.
  scenarios: for (const { kind, connections } of SCENARIOS) {
    for (let round = 1; round <= repeat; round++)
      for (const via of VIAS_RUN) {
        const background = await waitForQuiet({
          pids: [mock.pid, proxy.pid, gateway.pid],
          quietCores: QUIET_CORES,
          maxSeconds: waitQuietSeconds,
          onWait: (busy) =>
            process.stdout.write(
              `(waiting up to ${waitQuietSeconds} s for other processes to go quiet: ${busy.toFixed(2)} cores) `,
            ),
        });
        if (background > QUIET_CORES)
          process.stdout.write(`(machine busy: ${background.toFixed(2)} cores used by other processes) `);
        process.stdout.write(
          `running ${kind} via ${via}, ${connections} connection(s)${repeat > 1 ? `, round ${round} of ${repeat}` : ''}… `,
        );
        const run = await measure(kind, via, connections, targetsFor(kind, endpoints)[via], pids);
        if (via === 'proxy') memoryAfterLoad.proxy = memory(proxy.pid);
        else if (via !== 'direct') {
          memoryAfterLoad.gateway = memory(gateway.pid);
          heapAfterLoad = await readHeapBreakdown(gateway.url, adminKey);
        }
        runs.push(run);
        process.stdout.write(`${run.rps.toFixed(0)} req/s${failures(run) > 0 ? `, ${failures(run)} FAILED` : ''}\n`);
        const gone = [mock, proxy, gateway].find((child) => !child.alive());
        if (gone) {
          aborted = `${gone.name} (pid ${gone.pid}) exited during ${kind} via ${via} x${connections}; its last output:\n${gone.output()}`;
          break scenarios;
        }
      }
  }
  const rss = (pid: number, before: Memory, afterLoad: Memory | undefined) => {
    const now = memory(pid);
    return { before: before.rssMb, after: (afterLoad ?? now).rssMb, atEnd: now.rssMb, peak: now.peakRssMb };
  };
  // With --repeat, every figure below is the median of the rounds'.
  const figures = medianRuns(runs);
  const derived = derive(figures, {
    gateway: {
      ...rss(gateway.pid, memoryBefore.gateway, memoryAfterLoad.gateway),
      heap: { before: heapBefore, after: heapAfterLoad },
    },
    proxy: rss(proxy.pid, memoryBefore.proxy, memoryAfterLoad.proxy),
  });
  const checks = checkTargets(derived);
  const failed = failureReport(runs);
  process.stdout.write(
    `\n${runsTable(runs)}\n${repeat > 1 ? `\nmedians of ${repeat} rounds:\n${runsTable(figures)}\n` : ''}\nagainst the do-nothing proxy (same scenario${repeat > 1 ? ', medians' : ', same run'}):\n${ratiosTable(figures)}\n\n${targetsTable(checks)}\n\n${derivedLines(derived)}\n`,
  );
  process.stdout.write(
    '"CPU ms/req" is the CPU of the process in the middle (the proxy or the gateway) per good response; "cores" is the CPU used during the window (1.00 = one core busy) by that process, the mock provider, this process (the load generator) and everything else.\n',
  );
  const background = backgroundWarning(runs);
  if (background) process.stdout.write(`${background}\n`);
  if (failed) {
    process.stdout.write(failed);
    process.stderr.write(failed);
  } else {
    process.stdout.write('every response was a 2xx with the expected body.\n');
  }
  const scaleOut = aborted ? null : await runScaleOut(mock.url, env, connectionsForScaleOut());
  if (aborted) {
    const message = `\n${'!'.repeat(78)}\n!!! BENCHMARK ABORTED: ${aborted}\n${'!'.repeat(78)}\n`;
    process.stdout.write(message);
    process.stderr.write(message);
    process.exitCode = 1;
  }
  const summary = {
    date: new Date().toISOString(),
    machine: m,
    settings: {
      warmupSeconds,
      measureSeconds,
      maxRequests,
      repeat,
      vias: VIAS_RUN,
      waitQuietSeconds,
      limits: !values['no-limits'],
      gatewayNodeFlags,
      gatewaySettings,
    },
    runs: runs.map(({ examples: _examples, ...figures }) => figures),
    derived,
    targets: checks,
    failedRequests: runs.reduce((n, r) => n + failures(r), 0),
    scaleOut,
    aborted,
  };
  process.stdout.write(`BENCH_JSON ${JSON.stringify(summary)}\n`);
}

/** The most connections a chat scenario asked for (32 by default): the scale-out runs use as many. */
function connectionsForScaleOut(): number {
  return Math.max(1, ...SCENARIOS.filter((s) => s.kind === 'chat').map((s) => s.connections));
}

async function runScaleOut(
  mockUrl: string,
  env: Record<string, string>,
  connections: number,
): Promise<ScaleOutRun[] | null> {
  if (values['no-scale-out']) return null;
  const unavailable = await scaleOutUnavailable();
  if (unavailable) {
    process.stdout.write(`\nscale-out runs skipped: ${unavailable}\n`);
    return null;
  }
  process.stdout.write('\n');
  const runs = await benchScaleOut({
    bin: BIN,
    cwd: PACKAGE_ROOT,
    env,
    mockUrl,
    connections,
    warmupMs: warmupSeconds * 1000,
    measureMs: measureSeconds * 1000,
    maxRequests,
    write: (text) => process.stdout.write(text),
  });
  process.stdout.write(
    `\n${scaleOutTable(runs)}\n(three instances share this machine's cores with the mock provider and the load generator: on ${machine().cpus} CPU(s) the figure shows the cost of sharing state, not the gain of more machines)\n`,
  );
  return runs;
}

async function measure(
  kind: Kind,
  via: Via,
  connections: number,
  target: LoadTarget,
  pids: { gateway: number; proxy: number; mock: number },
): Promise<RunFigures> {
  const at = () => ({
    gateway: cpuMs(pids.gateway),
    proxy: cpuMs(pids.proxy),
    mock: cpuMs(pids.mock),
    self: selfCpuMs(),
    machine: machineBusyMs(),
  });
  let start = at();
  let end = start;
  const result = await runLoad(target, {
    connections,
    warmupMs: warmupSeconds * 1000,
    measureMs: measureSeconds * 1000,
    maxRequests,
    onWindow: { start: () => (start = at()), end: () => (end = at()) },
  });
  const used = (key: keyof ReturnType<typeof at>) => end[key] - start[key];
  const cores = (ms: number) => (result.windowMs > 0 ? ms / result.windowMs : NaN);
  // The process in the middle: the proxy for proxy runs, the gateway otherwise (idle in direct runs).
  const middle = via === 'proxy' ? used('proxy') : used('gateway');
  const ours = used('gateway') + used('proxy') + used('mock') + used('self');
  return {
    kind,
    via,
    connections,
    requests: result.requests,
    windowMs: result.windowMs,
    rps: result.rps,
    p50Ms: quantile(result.latency, 0.5),
    p99Ms: quantile(result.latency, 0.99),
    firstChunkP50Ms: result.firstChunk ? quantile(result.firstChunk, 0.5) : null,
    firstChunkP99Ms: result.firstChunk ? quantile(result.firstChunk, 0.99) : null,
    cpuMsPerRequest: via !== 'direct' && result.requests > 0 ? middle / result.requests : null,
    cores: {
      middle: cores(middle),
      mock: cores(used('mock')),
      loadgen: cores(used('self')),
      other: Math.max(0, cores(used('machine') - ours)),
    },
    non2xx: result.non2xx,
    errors: result.errors,
    badBodies: result.badBodies,
    examples: result.examples,
  };
}

function parseVias(text: string): Via[] {
  const vias = text.split(',').map((item) => item.trim());
  const unknown = vias.filter((via) => !(VIAS as readonly string[]).includes(via));
  if (unknown.length > 0 || !vias.includes('proxy')) {
    process.stderr.write(
      `bench: --vias takes a list of ${VIAS.join(', ')} that includes proxy (every figure is a ratio to it), got ${text}\n${USAGE}\n`,
    );
    process.exit(2);
  }
  return VIAS.filter((via) => vias.includes(via));
}

function parseScenarios(text: string): Array<{ kind: Kind; connections: number }> {
  return text.split(',').map((item) => {
    const [kind, connections] = item.trim().split(':');
    const n = Number(connections);
    if ((kind !== 'chat' && kind !== 'stream') || !Number.isInteger(n) || n < 1) {
      process.stderr.write(
        `bench: --scenarios takes kind:connections items (kind chat or stream), got ${item}\n${USAGE}\n`,
      );
      process.exit(2);
    }
    return { kind, connections: n };
  });
}

/** The gateway's main-thread profile (written when it exits), summarised. */
function printProfile(dir: string): void {
  const file = mainThreadProfile(dir, gatewayPid ?? undefined);
  if (!file) {
    process.stderr.write(`bench: no .cpuprofile in ${dir}\n`);
    return;
  }
  process.stdout.write(
    `\ngateway CPU profile ${file} (main thread, start-up included):\n${formatSummary(summariseCpuProfile(file, PACKAGE_ROOT))}\n`,
  );
}

function positive(
  name: 'seconds' | 'warmup' | 'max-requests' | 'repeat' | 'wait-quiet',
  zeroOk: boolean,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const value = Number(values[name]);
  if (!Number.isFinite(value) || value < 0 || (!zeroOk && value === 0) || value > max) {
    process.stderr.write(
      `bench: --${name} must be a ${zeroOk ? 'non-negative' : 'positive'} number${max < Number.MAX_SAFE_INTEGER ? ` up to ${max}` : ''}, got ${String(values[name])}\n${USAGE}\n`,
    );
    process.exit(2);
  }
  return value;
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
  for (const child of children)
    process.stderr.write(`--- last output of ${child.name} (pid ${child.pid}) ---\n${child.output()}\n`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
if (profileDir && process.exitCode !== 1) printProfile(profileDir);
