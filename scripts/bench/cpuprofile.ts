import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The parts of a V8 `.cpuprofile` (what `node --cpu-prof` writes) that a summary needs. */
export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface HotSpot {
  /** `file:function:line`, the file relative to the repository (or `node:…`, `(program)`, `(garbage collector)`). */
  where: string;
  selfMs: number;
  /** Share of the profile's non-idle time. */
  share: number;
}

export interface ProfileSummary {
  busyMs: number;
  idleMs: number;
  /** Self time by function, most first. */
  functions: HotSpot[];
  /** Self time by owner: svcgw's own code, each dependency, Node internals, GC, native. */
  owners: HotSpot[];
  /** Time by gateway pipeline stage: each sample goes to the stage of the innermost frame of its stack that has one (see `STAGES`). */
  stages: HotSpot[];
}

/**
 * The gateway's pipeline, as file patterns. A sample goes to the stage of the innermost frame on
 * its stack that matches one (the first matching pattern in this order): a native `writev` under
 * undici is the upstream call, a `JSON.parse` under the content-type parser is the body's parse,
 * and the handler, which runs inside the parser's callback since the steps before the provider
 * call stopped waiting for promises, is not. Start-up alone takes everything under it.
 */
/** The index of start-up in STAGES (its first entry). */
const START_UP = 0;
const STAGES: Array<[string, (url: string) => boolean]> = [
  [
    'start-up (module loading, migrations)',
    (u) => u.startsWith('node:internal/modules') || u.includes('/storage/migrations/'),
  ],
  [
    'request log: SQLite insert (kysely, better-sqlite3)',
    (u) => /request-logs?\.js|request-log-writer|\/kysely\/|better-sqlite3/.test(u),
  ],
  ['request log: building the row (RequestLogDraft)', (u) => u.includes('request-log-draft')],
  ['auth hook (key hash, cache)', (u) => u.includes('plugins/auth') || u.includes('api-key-service')],
  ['zod validation of the body', (u) => u.includes('/zod/') || u.includes('fastify-type-provider-zod')],
  ['response to client: fastify reply', (u) => u.includes('fastify/lib/reply')],
  ['request body JSON.parse (content-type parser)', (u) => u.includes('/gateway/routes.')],
  ['gateway headers (trace id, custom host check)', (u) => u.includes('gateway-headers')],
  ['header copying (forward-headers)', (u) => u.includes('forward-headers')],
  ['upstream target (URL building)', (u) => u.includes('/providers/') || u.includes('resolve-target')],
  ['SSE relay', (u) => u.includes('sse-relay')],
  ['upstream call: undici', (u) => u.includes('/undici/') || u.includes('upstream-client') || u.startsWith('wasm://')],
  ['other gateway code (handle-request)', (u) => u.includes('/gateway/handle-request')],
  ['fastify routing, hooks, request objects', (u) => /\/fastify\/|find-my-way|avvio/.test(u)],
  ["node's http server (parsing, ServerResponse, its socket writes)", (u) => u.startsWith('node:_http')],
];

/**
 * Self time per function, from the samples: each sample is charged to the function on top of the
 * stack, for the time until the next sample. Idle time is left out of the shares.
 */
export function summariseCpuProfile(file: string, root: string): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    // timeDeltas[i] is the time before sample i, so the time spent in sample i is timeDeltas[i + 1].
    const delta = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, delta));
  }
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stageMemo = new Map<number, number>();
  const stageOf = (id: number | undefined): number => {
    if (id === undefined) return STAGES.length;
    const known = stageMemo.get(id);
    if (known !== undefined) return known;
    const url = byId.get(id)?.callFrame.url ?? '';
    const own = STAGES.findIndex(([, test]) => test(url));
    const above = stageOf(parent.get(id));
    const stage = above === START_UP || own === -1 ? above : own;
    stageMemo.set(id, stage);
    return stage;
  };
  const functions = new Map<string, number>();
  const owners = new Map<string, number>();
  const stages = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const file = displayFile(frame.url, root);
    const where = file ? `${file}:${frame.functionName || '(anonymous)'}:${frame.lineNumber + 1}` : frame.functionName;
    functions.set(where, (functions.get(where) ?? 0) + us);
    const owner = ownerOf(frame.url, frame.functionName, root);
    owners.set(owner, (owners.get(owner) ?? 0) + us);
    const stage =
      STAGES[stageOf(id)]?.[0] ??
      (frame.functionName.startsWith('(')
        ? frame.functionName
        : `other: ${ownerOf(frame.url, frame.functionName, root)}`);
    stages.set(stage, (stages.get(stage) ?? 0) + us);
  }
  const rank = (m: Map<string, number>): HotSpot[] =>
    [...m]
      .map(([where, us]) => ({ where, selfMs: us / 1000, share: busyUs > 0 ? us / busyUs : 0 }))
      .sort((a, b) => b.selfMs - a.selfMs);
  return {
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    functions: rank(functions),
    owners: rank(owners),
    stages: rank(stages),
  };
}

export function formatSummary(summary: ProfileSummary, top = 25): string {
  const line = (h: HotSpot) =>
    `${(h.share * 100).toFixed(1).padStart(5)}%  ${h.selfMs.toFixed(0).padStart(7)} ms  ${h.where}`;
  return [
    `busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms (shares are of busy time)`,
    'time by pipeline stage:',
    ...summary.stages.slice(0, 20).map(line),
    'self time by owner:',
    ...summary.owners.slice(0, 12).map(line),
    `top ${top} functions by self time:`,
    ...summary.functions.slice(0, top).map(line),
  ].join('\n');
}

/** `CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile`, node's default name; the main thread's id is 0. */
const PROFILE_NAME = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.\d+\.cpuprofile$/;

/**
 * The main thread's profile of process `pid` in `dir` (or, without a pid, of the newest process
 * there). `--cpu-prof` writes one file per thread, and the gateway runs worker threads (the
 * regex guardrail's sandbox), whose profiles are small and mostly idle: by thread id 0 in the
 * name, else the largest file of that process. Null when there is none.
 */
export function mainThreadProfile(dir: string, pid?: number): string | null {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => {
      const path = join(dir, f);
      const stat = statSync(path);
      const match = PROFILE_NAME.exec(f);
      return {
        path,
        size: stat.size,
        mtimeMs: stat.mtimeMs,
        pid: match ? Number(match[1]) : null,
        thread: match ? Number(match[2]) : null,
      };
    });
  if (files.length === 0) return null;
  const newest = files.reduce((a, b) => (b.mtimeMs > a.mtimeMs ? b : a));
  const owner = pid ?? newest.pid;
  const candidates = owner === null ? files : files.filter((f) => f.pid === owner);
  const main = candidates.find((f) => f.thread === 0);
  if (main) return main.path;
  const largest = candidates.reduce<(typeof files)[number] | null>((a, b) => (a && a.size >= b.size ? a : b), null);
  return largest?.path ?? null;
}

function displayFile(url: string, root: string): string {
  if (url === '') return '';
  if (url.startsWith('node:')) return url;
  const path = url.startsWith('file://') ? new URL(url).pathname : url;
  return path.startsWith(root) ? relative(root, path) : path;
}

/** svcgw's own code, a dependency by package name, a Node internal, or V8's own buckets. */
function ownerOf(url: string, functionName: string, root: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node: internals';
  const path = displayFile(url, root);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
  if (pkg) return `dependency ${pkg}`;
  if (path.startsWith('dist/src/')) return `svcgw ${path.split('/').slice(2, 3).join('/')}/`;
  return path;
}

// `node dist/scripts/bench/cpuprofile.js FILE.cpuprofile [TOP]` prints the summary.
if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node dist/scripts/bench/cpuprofile.js FILE.cpuprofile [TOP]\n');
    process.exit(2);
  }
  process.stdout.write(`${formatSummary(summariseCpuProfile(file, process.cwd()), Number(top ?? 25))}\n`);
}
