import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../src/lib/package-root.js';
import { runLoad } from './bench/load.js';
import { cpuMs, memory } from './bench/proc.js';
import { killAllNow, startNode, stopAll, type BenchChild } from './bench/processes.js';
import { VIAS, type Kind, type Via } from './bench/report.js';
import { childEnv, createWorkspaceKey, enableLimits, preflight, primeCache, targetsFor } from './bench/setup.js';
import { parseCommandLine } from './bench/command-line.js';

/**
 * `npm run bench:compare -- --against DIR`: this checkout's gateway against another checkout's
 * (a worktree of the previous commit, say, built with `npx tsc -p tsconfig.build.json`), behind
 * one mock provider, with the same set-up as `npm run bench` (workspace key, both limits, logs).
 * Every round starts a fresh pair of gateways and measures each path on both, the order
 * alternating. On a shared 2-core machine `npm run bench`'s CPU per request moves by a quarter
 * from one run to the next, and one gateway process can run the same code a tenth faster or
 * slower than another for its whole life; the median of the per-round ratios is what is left.
 *
 *   node dist/scripts/bench-compare.js --against ../base [--vias gateway,guarded] [--kinds chat,stream]
 *     [--connections 32] [--rounds 8] [--seconds 3] [--warmup 3] [--pin]
 *
 * `--pin` puts both gateways on the last CPU and the mock provider and the load generator on the
 * others (taskset), so that the gateway measured is not descheduled by what feeds it. Prints,
 * per path, each build's median CPU per request (ms of the gateway process, all threads) and
 * throughput, and the median and range of the per-round ratios (this ÷ against).
 */

const USAGE =
  'usage: node dist/scripts/bench-compare.js --against DIR [--vias gateway,guarded,fallback,cached] [--kinds chat,stream] [--connections N] [--rounds N] [--seconds N] [--warmup N]';

const { values } = parseCommandLine('bench-compare', USAGE, {
  options: {
    against: { type: 'string' },
    vias: { type: 'string', default: 'gateway,guarded' },
    kinds: { type: 'string', default: 'chat,stream' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '3' },
    pin: { type: 'boolean', default: false },
  },
});

function fail(message: string): never {
  process.stderr.write(`bench-compare: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function positive(name: keyof typeof values): number {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n <= 0) fail(`--${name} takes a positive number, got ${String(values[name])}`);
  return n;
}

const against = values.against === undefined ? fail('--against DIR is required') : resolve(values.against);
if (!existsSync(join(against, 'dist', 'src', 'cli', 'main.js')))
  fail(`${against} has no built dist/ (run \`npx tsc -p tsconfig.build.json\` there first)`);
const vias = values.vias.split(',').map((v) => v.trim()) as Via[];
for (const via of vias)
  if (!(VIAS as readonly string[]).includes(via) || via === 'direct' || via === 'proxy')
    fail(`--vias takes gateway, guarded, fallback or cached, got ${via}`);
const kinds = values.kinds.split(',').map((k): Kind => {
  const kind = k.trim();
  if (kind !== 'chat' && kind !== 'stream') fail(`--kinds takes chat or stream, got ${kind}`);
  return kind;
});
const connections = positive('connections');
const rounds = positive('rounds');
const measureMs = positive('seconds') * 1000;
const warmupMs = positive('warmup') * 1000;

const MOCK = fileURLToPath(new URL('./mock-provider.js', import.meta.url));
const dataDirs: string[] = [];

interface Build {
  label: string;
  child: BenchChild;
  key: string;
  dataDir: string;
}

interface Window {
  cpuMsPerRequest: number;
  rps: number;
  failed: number;
}

async function startBuild(label: string, root: string, env: Record<string, string>): Promise<Build> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcgw-compare-'));
  dataDirs.push(dataDir);
  const adminKey = randomBytes(20).toString('hex');
  const child = await startNode({
    name: `svcgw serve (${label})`,
    args: [join(root, 'bin', 'svcgw'), 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir],
    cwd: root,
    env: { ...env, SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey, SVCGW_LOG_LEVEL: 'warn' },
  });
  const key = await createWorkspaceKey(child.url, adminKey);
  await enableLimits(child.url, adminKey);
  return { label, child, key, dataDir };
}

async function measure(build: Build, mockUrl: string, kind: Kind, via: Via, warm: number): Promise<Window> {
  const target = targetsFor(kind, { mockUrl, gatewayUrl: build.child.url, gatewayKey: build.key })[via];
  let start = 0;
  let end = 0;
  const result = await runLoad(target, {
    connections,
    warmupMs: warm,
    measureMs,
    maxRequests: 1_000_000,
    onWindow: { start: () => (start = cpuMs(build.child.pid)), end: () => (end = cpuMs(build.child.pid)) },
  });
  const failed =
    result.badBodies +
    Object.values(result.non2xx).reduce((a, b) => a + b, 0) +
    Object.values(result.errors).reduce((a, b) => a + b, 0);
  return { cpuMsPerRequest: result.requests > 0 ? (end - start) / result.requests : NaN, rps: result.rps, failed };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Every thread of `pid` onto `cpus` (a taskset list such as "1"). */
function pin(pid: number, cpus: string): void {
  execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus, String(pid)], { stdio: 'ignore' });
}

async function main(): Promise<void> {
  const env = childEnv();
  const mock = await startNode({ name: 'mock provider', args: [MOCK, '--port', '0'], cwd: PACKAGE_ROOT, env });
  const helpers = `0-${Math.max(0, availableParallelism() - 2)}`;
  if (values.pin) {
    pin(mock.pid, helpers);
    pin(process.pid, helpers);
  }
  process.stdout.write(`svcgw compare, ${new Date().toISOString()}: this = ${PACKAGE_ROOT}, against = ${against}\n`);
  process.stdout.write(
    `${rounds} rounds, each with both builds started afresh; per round and path ${measureMs / 1000} s measured per build after ${warmupMs / 1000} s of warm-up, ${connections} connections, the order alternating\n\n`,
  );
  const paths = kinds.flatMap((kind) => vias.map((via) => ({ kind, via })));
  const windows = paths.map((): [Window[], Window[]] => [[], []]);
  const rssAfter: [number[], number[]] = [[], []];
  for (let round = 0; round < rounds; round++) {
    // A new pair of processes every round: one process's JIT can run the same code a tenth
    // faster or slower than another's for its whole life, which alternating windows cannot undo.
    // Started in turn first too: the first of a pair has shown a few percent less CPU per request.
    const builds: Build[] = [];
    for (const i of round % 2 === 0 ? [0, 1] : [1, 0])
      builds[i] = await startBuild(i === 0 ? 'this' : 'against', i === 0 ? PACKAGE_ROOT : against, env);
    // The gateways on the last CPU, the mock provider and the load generator on the others.
    if (values.pin) for (const build of builds) pin(build.child.pid, String(availableParallelism() - 1));
    for (const [p, { kind, via }] of paths.entries()) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const build = builds[i]!;
        const target = targetsFor(kind, { mockUrl: mock.url, gatewayUrl: build.child.url, gatewayKey: build.key })[via];
        if (via === 'cached') await primeCache(`${build.label} ${kind} via ${via}`, target);
        await preflight(`${build.label} ${kind} via ${via}`, target);
        windows[p]![i]!.push(await measure(build, mock.url, kind, via, warmupMs));
      }
      const gone = [mock, ...builds.map((b) => b.child)].find((c) => !c.alive());
      if (gone) throw new Error(`${gone.name} exited; its last output:\n${gone.output()}`);
    }
    // After every path's load, before the stop: the memory the load left behind.
    for (const [i, build] of builds.entries()) rssAfter[i]!.push(memory(build.child.pid).rssMb);
    for (const build of builds) {
      await build.child.stop();
      rmSync(build.dataDir, { recursive: true, force: true });
    }
    process.stdout.write(`round ${round + 1} of ${rounds} done\n`);
  }
  const lines = paths.map(({ kind, via }, p) => {
    const [a, b] = windows[p]!;
    const ratios = a.map((w, i) => w.cpuMsPerRequest / b[i]!.cpuMsPerRequest);
    const failed = [...a, ...b].reduce((n, w) => n + w.failed, 0);
    return (
      `${kind.padEnd(6)} ${via.padEnd(8)} CPU ms/req this ${median(a.map((w) => w.cpuMsPerRequest)).toFixed(3)}` +
      ` against ${median(b.map((w) => w.cpuMsPerRequest)).toFixed(3)}; ratio median ${median(ratios).toFixed(3)}` +
      ` (rounds ${Math.min(...ratios).toFixed(3)} to ${Math.max(...ratios).toFixed(3)}); req/s ${median(a.map((w) => w.rps)).toFixed(0)}` +
      ` vs ${median(b.map((w) => w.rps)).toFixed(0)}${failed > 0 ? `; ${failed} FAILED` : ''}`
    );
  });
  const [rssThis, rssAgainst] = rssAfter;
  const rssRatios = rssThis.map((mb, i) => mb / rssAgainst[i]!);
  lines.push(
    `RSS after the rounds' load, MB: this ${median(rssThis).toFixed(1)} against ${median(rssAgainst).toFixed(1)};` +
      ` ratio median ${median(rssRatios).toFixed(3)} (rounds ${Math.min(...rssRatios).toFixed(3)} to ${Math.max(...rssRatios).toFixed(3)})`,
  );
  process.stdout.write(`\nratio = this ÷ against (below 1: this build is cheaper)\n${lines.join('\n')}\n`);
}

function cleanUp(): void {
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

process.once('exit', () => {
  killAllNow();
  cleanUp();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void stopAll().finally(() => process.exit(130)));

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench-compare: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => void stopAll().then(cleanUp));
