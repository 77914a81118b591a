import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/** The parts of a V8 `.cpuprofile` (what `node --cpu-prof` writes) that a summary needs. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
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
}

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
  const functions = new Map<string, number>();
  const owners = new Map<string, number>();
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
  }
  const rank = (m: Map<string, number>): HotSpot[] =>
    [...m].map(([where, us]) => ({ where, selfMs: us / 1000, share: busyUs > 0 ? us / busyUs : 0 })).sort((a, b) => b.selfMs - a.selfMs);
  return { busyMs: busyUs / 1000, idleMs: idleUs / 1000, functions: rank(functions), owners: rank(owners) };
}

export function formatSummary(summary: ProfileSummary, top = 25): string {
  const line = (h: HotSpot) => `${(h.share * 100).toFixed(1).padStart(5)}%  ${h.selfMs.toFixed(0).padStart(7)} ms  ${h.where}`;
  return [
    `busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms (shares are of busy time)`,
    'self time by owner:',
    ...summary.owners.slice(0, 15).map(line),
    `top ${top} functions by self time:`,
    ...summary.functions.slice(0, top).map(line),
  ].join('\n');
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
