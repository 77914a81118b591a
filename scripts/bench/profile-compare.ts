import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { CpuProfile } from './cpuprofile.js';

/**
 * Two CPU profiles of the gateway, function by function, as time per request: for runs of a
 * fixed request count (`bench.js --warmup 0 --max-requests N --cpu-prof DIR`), the difference
 * between two builds in one function is read in microseconds. Inclusive time (the function and
 * what it called) rather than self time: a change inside a check shows in the check and in
 * everything above it, and a cost that moved from one function to another cancels out higher up.
 */

export interface InclusiveTimes {
  /** Non-idle time of the profile, µs. */
  busyUs: number;
  /** Per `file:function:line`, the time of every sample with that frame anywhere on its stack, µs (once per sample). */
  byFunction: Map<string, number>;
}

export function inclusiveTimes(file: string, root: string): InclusiveTimes {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const labelOf = new Map<number, string>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    labelOf.set(node.id, labelFor(url, functionName, lineNumber, root));
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const byFunction = new Map<string, number>();
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    // timeDeltas[i] is the time before sample i, so the time spent in sample i is timeDeltas[i + 1].
    const us = Math.max(0, profile.timeDeltas[i + 1] ?? 0);
    const top = profile.samples[i]!;
    if (labelOf.get(top) === '(idle)') continue;
    busyUs += us;
    const seen = new Set<string>();
    for (let id: number | undefined = top; id !== undefined; id = parent.get(id)) {
      const label = labelOf.get(id)!;
      // A recursive function is on the stack more than once: its time is counted once.
      if (seen.has(label)) continue;
      seen.add(label);
      byFunction.set(label, (byFunction.get(label) ?? 0) + us);
    }
  }
  return { busyUs, byFunction };
}

export interface FunctionDelta {
  where: string;
  /** µs per request in each profile. */
  before: number;
  after: number;
}

/** Functions whose time per request differs most between the two profiles, largest difference first. */
export function compareProfiles(
  before: InclusiveTimes,
  after: InclusiveTimes,
  requests: { before: number; after: number },
  match?: RegExp,
): FunctionDelta[] {
  const names = new Set([...before.byFunction.keys(), ...after.byFunction.keys()]);
  const rows: FunctionDelta[] = [];
  for (const where of names) {
    if (match && !match.test(where)) continue;
    rows.push({
      where,
      before: (before.byFunction.get(where) ?? 0) / requests.before,
      after: (after.byFunction.get(where) ?? 0) / requests.after,
    });
  }
  return rows.sort((a, b) => Math.abs(b.after - b.before) - Math.abs(a.after - a.before));
}

export function formatComparison(
  before: InclusiveTimes,
  after: InclusiveTimes,
  requests: { before: number; after: number },
  rows: FunctionDelta[],
): string {
  const us = (n: number) => n.toFixed(2).padStart(8);
  return [
    `busy µs per request: ${us(before.busyUs / requests.before)} → ${us(after.busyUs / requests.after)}`,
    `${'change'.padStart(8)} ${'before'.padStart(8)} ${'after'.padStart(8)}  function (inclusive µs per request)`,
    ...rows.map((r) => `${us(r.after - r.before)} ${us(r.before)} ${us(r.after)}  ${r.where}`),
  ].join('\n');
}

/**
 * `file:function`, the file from its `dist/` or `node_modules/` on (so that two checkouts' profiles
 * line up) and without a line number (which moves when code above it changes); anonymous
 * functions keep theirs, the only way to tell them apart.
 */
function labelFor(url: string, functionName: string, lineNumber: number, root: string): string {
  if (url === '') return functionName;
  let file = url.startsWith('file://') ? new URL(url).pathname : url;
  if (!file.startsWith('node:')) {
    const from = Math.max(file.lastIndexOf('/dist/'), file.indexOf('/node_modules/'));
    file = from >= 0 ? file.slice(from + 1) : file.startsWith(root) ? relative(root, file) : file;
  }
  return functionName ? `${file}:${functionName}` : `${file}:(anonymous):${lineNumber + 1}`;
}

const USAGE =
  'usage: node dist/scripts/bench/profile-compare.js BEFORE.cpuprofile AFTER.cpuprofile --requests N[,M] [--match REGEX] [--top N]';

// Compares two profiles; `--requests` is how many requests each served (one number for both, or two).
if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const at = args.indexOf(name);
    return at === -1 ? undefined : args.splice(at, 2)[1];
  };
  const counts = (option('--requests') ?? '').split(',').map(Number);
  const match = option('--match');
  const top = Number(option('--top') ?? 40);
  const [beforeFile, afterFile] = args;
  const requests = { before: counts[0]!, after: counts[1] ?? counts[0]! };
  if (!beforeFile || !afterFile || !(requests.before > 0) || !(requests.after > 0) || !(top > 0)) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const before = inclusiveTimes(beforeFile, process.cwd());
  const after = inclusiveTimes(afterFile, process.cwd());
  const rows = compareProfiles(before, after, requests, match === undefined ? undefined : new RegExp(match));
  process.stdout.write(`${formatComparison(before, after, requests, rows.slice(0, top))}\n`);
}
