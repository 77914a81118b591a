import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { PACKAGE_ROOT } from '../src/lib/package-root.js';
import { formatSummary, newestProfile, summariseCpuProfile } from './bench/cpuprofile.js';
import { quantile, runLoad, type LoadTarget } from './bench/load.js';
import { cpuMs, machine, machineBusyMs, memory, selfCpuMs, waitForQuiet } from './bench/proc.js';
import { killAllNow, startNode, stopAll, type BenchChild } from './bench/processes.js';
import {
  backgroundWarning,
  checkTargets,
  derive,
  derivedLines,
  failureReport,
  failures,
  machineLine,
  runsTable,
  targetsTable,
  type Kind,
  type RunFigures,
  type Via,
} from './bench/report.js';

/**
 * `npm run bench`: the same chat completion sent straight to a mock provider and through svcgw,
 * figures side by side. Three processes (mock provider, gateway, this load generator) share the
 * machine's cores; nothing is asserted, the targets are only printed next to the figures.
 *
 *   node dist/scripts/bench.js [--seconds 10] [--warmup 5] [--max-requests 1000000]
 *                              [--scenarios chat:1,chat:32,stream:1,stream:32] [--cpu-prof DIR] [--wait-quiet 30]
 *
 * Before each run it waits (up to `--wait-quiet` seconds, 0 = never) for other processes to stop
 * using more than a fifth of a core: a shared machine running builds skews every figure.
 * `--cpu-prof DIR` runs the gateway under `node --cpu-prof` and prints its hottest functions;
 * `--node-flags "…"` starts the gateway's node with those flags (to try V8 or GC settings).
 * Each scenario also runs `guarded`: through the gateway with a config of five built-in input
 * checks (GUARDED_CONFIG), to show what guardrails cost; `--no-guardrails` leaves it out.
 */
const USAGE =
  'usage: node dist/scripts/bench.js [--seconds N] [--warmup N] [--max-requests N] [--scenarios chat:1,chat:32,stream:1,stream:32] [--cpu-prof DIR] [--wait-quiet SECONDS] [--no-limits] [--no-guardrails] [--node-flags "--max-semi-space-size=4 ..."]';
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '5' },
    'max-requests': { type: 'string', default: '1000000' },
    scenarios: { type: 'string', default: 'chat:1,chat:32,stream:1,stream:32' },
    'cpu-prof': { type: 'string' },
    'wait-quiet': { type: 'string', default: '30' },
    'no-limits': { type: 'boolean', default: false },
    'no-guardrails': { type: 'boolean', default: false },
    'node-flags': { type: 'string', default: '' },
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
const waitQuietSeconds = positive('wait-quiet', true);

const SCENARIOS = parseScenarios(values.scenarios);
const profileDir = values['cpu-prof'] === undefined ? null : resolve(values['cpu-prof']);
const gatewayNodeFlags = values['node-flags'].split(/\s+/).filter(Boolean);
const MESSAGES = [{ role: 'user', content: 'hello' }];
const BIN = join(PACKAGE_ROOT, 'bin', 'svcgw');
const MOCK = fileURLToPath(new URL('./mock-provider.js', import.meta.url));

/**
 * Five built-in checks on every request, none with network: what a typical "keep prompts sane"
 * guardrail looks like. All pass on the bench's prompt, so the answer is a 200 with hook_results.
 */
const GUARDED_CONFIG = {
  input_guardrails: [
    {
      'default.contains': { operator: 'none', words: ['password', 'secret'] },
      'default.wordCount': { minWords: 1, maxWords: 2000 },
      'default.regexMatch': { rule: 'sk-[A-Za-z0-9]{20,}', not: true },
      'default.characterCount': { minCharacters: 1, maxCharacters: 20000 },
      'default.pii': { categories: ['EMAIL_ADDRESS', 'PHONE_NUMBER', 'CREDIT_CARD'] },
      deny: true,
    },
  ],
};

const QUIET_CORES = 0.2;
const children: BenchChild[] = [];
let dataDir: string | null = null;

async function cleanUp(): Promise<void> {
  await stopAll();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = null;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping the mock provider and the gateway\n`);
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
  if (m.cpus <= 4) {
    process.stdout.write(
      `note: only ${m.cpus} CPU(s) for three busy processes (load generator, gateway, mock provider); they contend, so absolute figures are pessimistic. See the "cores" column.\n`,
    );
  }

  const mock = await startNode({ name: 'mock provider', args: [MOCK, '--port', '0'], cwd: PACKAGE_ROOT, env });
  children.push(mock);
  dataDir = mkdtempSync(join(tmpdir(), 'svcgw-bench-'));
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const gateway = await startNode({
    name: 'svcgw serve',
    args: [
      ...gatewayNodeFlags,
      ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
      BIN,
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
    ],
    cwd: PACKAGE_ROOT,
    env: { ...env, SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey, SVCGW_LOG_LEVEL: 'warn' },
  });
  children.push(gateway);
  process.stdout.write(
    `mock provider pid ${mock.pid} at ${mock.url}; gateway pid ${gateway.pid} at ${gateway.url}${gatewayNodeFlags.length > 0 ? ` (node ${gatewayNodeFlags.join(' ')})` : ''}\n\n`,
  );

  const targets = (kind: Kind): Record<Via, LoadTarget> => {
    const stream = kind === 'stream';
    const json = { 'content-type': 'application/json' };
    const viaGateway = {
      origin: gateway.url,
      path: '/v1/chat/completions',
      headers: {
        ...json,
        'x-service-api-key': adminKey,
        'x-service-provider': 'openai',
        authorization: 'Bearer test',
        'x-service-custom-host': `${mock.url}/v1`,
      },
      body: JSON.stringify({ model: 'gpt-4o', messages: MESSAGES, ...(stream ? { stream: true } : {}) }),
      stream,
      // The usage-only chunk the gateway asked for is not passed on to a client that did not ask.
      check: stream
        ? (text: string) => text.endsWith('data: [DONE]\n\n') && !text.includes('"choices":[]')
        : (text: string) => text.includes('"chat.completion"'),
    };
    return {
      direct: {
        origin: mock.url,
        path: '/v1/chat/completions',
        headers: { ...json, authorization: 'Bearer test' },
        // The gateway asks streams for usage on the client's behalf; the direct run asks the same.
        body: JSON.stringify({
          model: 'gpt-4o',
          messages: MESSAGES,
          ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
        }),
        stream,
        check: stream
          ? (text) => text.endsWith('data: [DONE]\n\n') && text.includes('"usage":{')
          : (text) => text.includes('"chat.completion"'),
      },
      gateway: viaGateway,
      guarded: {
        ...viaGateway,
        headers: { ...viaGateway.headers, 'x-service-config': JSON.stringify({ ...GUARDED_CONFIG }) },
        // Every check passed: the answer carries the results (a stream, in its verdict event).
        check: (text: string) => viaGateway.check(text) && text.includes('"before_request_hooks":[{'),
      },
    };
  };

  // Run once with --no-limits and once without to see what the limit checks cost per request.
  if (!values['no-limits']) await enableLimits(gateway.url, adminKey);
  await preflight(gateway.url, targets('chat').gateway);
  if (!values['no-guardrails']) await preflight(gateway.url, targets('chat').guarded);
  const memoryBefore = memory(gateway.pid);

  const runs: RunFigures[] = [];
  let aborted: string | null = null;
  scenarios: for (const { kind, connections } of SCENARIOS) {
    for (const via of values['no-guardrails']
      ? (['direct', 'gateway'] as const)
      : (['direct', 'gateway', 'guarded'] as const)) {
      const background = await waitForQuiet({
        pids: [mock.pid, gateway.pid],
        quietCores: QUIET_CORES,
        maxSeconds: waitQuietSeconds,
        onWait: (busy) =>
          process.stdout.write(
            `(waiting up to ${waitQuietSeconds} s for other processes to go quiet: ${busy.toFixed(2)} cores) `,
          ),
      });
      if (background > QUIET_CORES)
        process.stdout.write(`(machine still busy: ${background.toFixed(2)} cores used by other processes) `);
      process.stdout.write(`running ${kind} via ${via}, ${connections} connection(s)… `);
      const run = await measure(kind, via, connections, targets(kind)[via], gateway.pid, mock.pid);
      runs.push(run);
      process.stdout.write(`${run.rps.toFixed(0)} req/s${failures(run) > 0 ? `, ${failures(run)} FAILED` : ''}\n`);
      const gone = [mock, gateway].find((child) => !child.alive());
      if (gone) {
        aborted = `${gone.name} (pid ${gone.pid}) exited during ${kind} via ${via} x${connections}; its last output:\n${gone.output()}`;
        break scenarios;
      }
    }
  }
  const memoryAfter = memory(gateway.pid);

  const derived = derive(runs, { before: memoryBefore.rssMb, after: memoryAfter.rssMb, peak: memoryAfter.peakRssMb });
  const checks = checkTargets(derived);
  const failed = failureReport(runs);
  process.stdout.write(`\n${runsTable(runs)}\n\n${targetsTable(checks)}\n\n${derivedLines(derived)}\n`);
  process.stdout.write(
    '"cores" is the CPU used during the window (1.00 = one core busy) by the gateway, the mock provider, this process (the load generator) and everything else.\n',
  );
  const background = backgroundWarning(runs);
  if (background) process.stdout.write(`${background}\n`);
  if (failed) {
    process.stdout.write(failed);
    process.stderr.write(failed);
  } else {
    process.stdout.write('every response was a 2xx with the expected body.\n');
  }
  if (aborted) {
    const message = `\n${'!'.repeat(78)}\n!!! BENCHMARK ABORTED: ${aborted}\n${'!'.repeat(78)}\n`;
    process.stdout.write(message);
    process.stderr.write(message);
    process.exitCode = 1;
  }
  const summary = {
    date: new Date().toISOString(),
    machine: m,
    settings: { warmupSeconds, measureSeconds, maxRequests, gatewayNodeFlags },
    runs: runs.map(({ examples: _examples, ...figures }) => figures),
    derived,
    targets: checks,
    failedRequests: runs.reduce((n, r) => n + failures(r), 0),
    aborted,
  };
  process.stdout.write(`BENCH_JSON ${JSON.stringify(summary)}\n`);
}

async function measure(
  kind: Kind,
  via: Via,
  connections: number,
  target: LoadTarget,
  gatewayPid: number,
  mockPid: number,
): Promise<RunFigures> {
  const at = () => ({ gateway: cpuMs(gatewayPid), mock: cpuMs(mockPid), self: selfCpuMs(), machine: machineBusyMs() });
  let start = at();
  let end = start;
  const result = await runLoad(target, {
    connections,
    warmupMs: warmupSeconds * 1000,
    measureMs: measureSeconds * 1000,
    maxRequests,
    onWindow: { start: () => (start = at()), end: () => (end = at()) },
  });
  const cores = (key: 'gateway' | 'mock' | 'self' | 'machine') =>
    result.windowMs > 0 ? (end[key] - start[key]) / result.windowMs : NaN;
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
    gatewayCpuMsPerRequest:
      via !== 'direct' && result.requests > 0 ? (end.gateway - start.gateway) / result.requests : null,
    cores: {
      gateway: cores('gateway'),
      mock: cores('mock'),
      loadgen: cores('self'),
      other: Math.max(0, cores('machine') - cores('gateway') - cores('mock') - cores('self')),
    },
    non2xx: result.non2xx,
    errors: result.errors,
    badBodies: result.badBodies,
    examples: result.examples,
  };
}

/** One request through the gateway before any load: a broken set-up fails here, clearly, not as 8 runs of errors. */
async function preflight(gatewayUrl: string, target: LoadTarget): Promise<void> {
  const health = await request(`${gatewayUrl}/v1/health`);
  await health.body.text();
  const res = await request(`${target.origin}${target.path}`, {
    method: 'POST',
    headers: target.headers,
    body: target.body,
  });
  const text = await res.body.text();
  if (health.statusCode !== 200 || res.statusCode !== 200 || !target.check(text)) {
    throw new Error(
      `preflight through the gateway failed: health ${health.statusCode}, chat completion ${res.statusCode}: ${text.slice(0, 500)}`,
    );
  }
}

/** This environment without SVCGW_* settings, so a developer's own settings do not change the figures. */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVCGW_') && v !== undefined) env[k] = v;
  return env;
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

/** The gateway's profile (written when it exits), summarised. */
function printProfile(dir: string): void {
  const newest = newestProfile(dir);
  if (!newest) {
    process.stderr.write(`bench: no .cpuprofile in ${dir}\n`);
    return;
  }
  process.stdout.write(
    `\ngateway CPU profile ${newest} (start-up included):\n${formatSummary(summariseCpuProfile(newest, PACKAGE_ROOT))}\n`,
  );
}

function positive(
  name: 'seconds' | 'warmup' | 'max-requests' | 'wait-quiet',
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

/**
 * "With auth, limits and logging all on": a rate-limits policy and a usage-limits policy that
 * cover every bench request (high enough never to refuse one), so that each request pays for
 * the rate check, the budget reservation and its settlement.
 */
async function enableLimits(baseUrl: string, apiKey: string): Promise<void> {
  const common = {
    workspace_id: 'default',
    conditions: [{ key: 'workspace_id', value: 'default' }],
    group_by: [{ key: 'api_key' }],
  };
  const policies: Array<[string, Record<string, unknown>]> = [
    ['/v1/policies/rate-limits', { ...common, name: 'bench rate limit', type: 'requests', unit: 'rpm', value: 1e12 }],
    ['/v1/policies/usage-limits', { ...common, name: 'bench budget', type: 'cost', credit_limit: 1e9 }],
  ];
  for (const [path, body] of policies) {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`could not create ${path}: ${res.status} ${await res.text()}`);
  }
}
