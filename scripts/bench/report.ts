import type { Machine } from './proc.js';

/** `guarded`: through svcgw with a config of five built-in input checks (`GUARDED_CONFIG` in bench.ts). */
export type Via = 'direct' | 'gateway' | 'guarded';
export type Kind = 'chat' | 'stream';

/** One measured run: one kind of request, one path (direct or through svcgw), one concurrency. */
export interface RunFigures {
  kind: Kind;
  via: Via;
  connections: number;
  requests: number;
  windowMs: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Streams only: time to the first body chunk. */
  firstChunkP50Ms: number | null;
  firstChunkP99Ms: number | null;
  /** The gateway's CPU in the window divided by the good responses in it (gateway and guarded runs). */
  gatewayCpuMsPerRequest: number | null;
  /** CPU used in the window, in cores (1.0 = one core busy all the time). */
  cores: { gateway: number; mock: number; loadgen: number; other: number };
  non2xx: Record<string, number>;
  errors: Record<string, number>;
  badBodies: number;
  examples: string[];
}

export interface Derived {
  throughputRatio32: number;
  streamThroughputRatio32: number;
  addedLatencyP50Ms1: number;
  addedFirstChunkP50Ms1: number;
  gatewayCpuMsPerRequest32: number;
  gatewayCpuMsPerRequestWorst: number;
  rssAfterLoadMb: number;
  rssBeforeLoadMb: number;
  peakRssMb: number;
  /** What five built-in guardrail checks add, guarded minus gateway (NaN when not run). */
  guardrailAddedP50Ms1: number;
  guardrailAddedCpuMsPerRequest32: number;
  guardrailThroughputRatio32: number;
}

export interface TargetCheck {
  name: string;
  target: string;
  measured: string;
  /** null when the scenario it needs was not run. */
  met: boolean | null;
}

export const failures = (run: RunFigures): number =>
  sum(Object.values(run.non2xx)) + sum(Object.values(run.errors)) + run.badBodies;

export function find(runs: RunFigures[], kind: Kind, via: Via, connections: number): RunFigures | undefined {
  return runs.find((r) => r.kind === kind && r.via === via && r.connections === connections);
}

export function derive(runs: RunFigures[], memory: { before: number; after: number; peak: number }): Derived {
  const get = (kind: Kind, via: Via, c: number) => find(runs, kind, via, c);
  const ratio = (kind: Kind) => (get(kind, 'gateway', 32)?.rps ?? NaN) / (get(kind, 'direct', 32)?.rps ?? NaN);
  const cpu = runs.filter((r) => r.gatewayCpuMsPerRequest !== null).map((r) => r.gatewayCpuMsPerRequest!);
  return {
    throughputRatio32: ratio('chat'),
    streamThroughputRatio32: ratio('stream'),
    addedLatencyP50Ms1: (get('chat', 'gateway', 1)?.p50Ms ?? NaN) - (get('chat', 'direct', 1)?.p50Ms ?? NaN),
    addedFirstChunkP50Ms1:
      (get('stream', 'gateway', 1)?.firstChunkP50Ms ?? NaN) - (get('stream', 'direct', 1)?.firstChunkP50Ms ?? NaN),
    gatewayCpuMsPerRequest32: get('chat', 'gateway', 32)?.gatewayCpuMsPerRequest ?? NaN,
    gatewayCpuMsPerRequestWorst: cpu.length > 0 ? Math.max(...cpu) : NaN,
    rssAfterLoadMb: memory.after,
    rssBeforeLoadMb: memory.before,
    peakRssMb: memory.peak,
    guardrailAddedP50Ms1: (get('chat', 'guarded', 1)?.p50Ms ?? NaN) - (get('chat', 'gateway', 1)?.p50Ms ?? NaN),
    guardrailAddedCpuMsPerRequest32:
      (get('chat', 'guarded', 32)?.gatewayCpuMsPerRequest ?? NaN) -
      (get('chat', 'gateway', 32)?.gatewayCpuMsPerRequest ?? NaN),
    guardrailThroughputRatio32: (get('chat', 'guarded', 32)?.rps ?? NaN) / (get('chat', 'gateway', 32)?.rps ?? NaN),
  };
}

/** The project's targets; printed side by side with the figures, never asserted. */
export function checkTargets(d: Derived): TargetCheck[] {
  const met = (value: number, ok: (v: number) => boolean) => (Number.isFinite(value) ? ok(value) : null);
  return [
    {
      name: 'throughput via gateway / direct, 32 connections',
      target: '>= 40%',
      measured: pct(d.throughputRatio32),
      met: met(d.throughputRatio32, (v) => v >= 0.4),
    },
    {
      name: 'gateway CPU per request (non-streaming, 32 conn.)',
      target: '<= 0.100 ms',
      measured: msText(d.gatewayCpuMsPerRequest32),
      met: met(d.gatewayCpuMsPerRequest32, (v) => v <= 0.1),
    },
    {
      name: 'added latency p50, 1 connection',
      target: '<= 0.300 ms',
      measured: msText(d.addedLatencyP50Ms1),
      met: met(d.addedLatencyP50Ms1, (v) => v <= 0.3),
    },
    {
      name: 'added time to first chunk p50, 1 connection',
      target: '<= 1.000 ms',
      measured: msText(d.addedFirstChunkP50Ms1),
      met: met(d.addedFirstChunkP50Ms1, (v) => v <= 1),
    },
    {
      name: 'gateway resident memory after load',
      target: '<= 120 MB',
      measured: `${d.rssAfterLoadMb.toFixed(1)} MB`,
      met: met(d.rssAfterLoadMb, (v) => v <= 120),
    },
  ];
}

export function runsTable(runs: RunFigures[]): string {
  const header = [
    'scenario',
    'via',
    'conn',
    'req/s',
    'p50 ms',
    'p99 ms',
    '1st chunk p50',
    '1st chunk p99',
    'requests',
    'failed',
    'gw CPU ms/req',
    'cores gw/mock/load/other',
  ];
  const rows = runs.map((r) => [
    r.kind === 'chat' ? 'chat' : 'chat stream',
    r.via,
    String(r.connections),
    r.rps.toFixed(0),
    ms(r.p50Ms),
    ms(r.p99Ms),
    r.firstChunkP50Ms === null ? '-' : ms(r.firstChunkP50Ms),
    r.firstChunkP99Ms === null ? '-' : ms(r.firstChunkP99Ms),
    String(r.requests),
    String(failures(r)),
    r.gatewayCpuMsPerRequest === null ? '-' : ms(r.gatewayCpuMsPerRequest),
    [r.cores.gateway, r.cores.mock, r.cores.loadgen, r.cores.other].map((c) => c.toFixed(2)).join('/'),
  ]);
  return table(header, rows, 4);
}

export function targetsTable(checks: TargetCheck[]): string {
  return table(
    ['target', 'wanted', 'measured', ''],
    checks.map((c) => [c.name, c.target, c.measured, c.met === null ? 'not run' : c.met ? 'met' : 'MISSED']),
    1,
  );
}

export function derivedLines(d: Derived): string {
  return [
    `throughput ratio, streaming, 32 connections: ${pct(d.streamThroughputRatio32)}`,
    `gateway CPU per request, worst scenario: ${ms(d.gatewayCpuMsPerRequestWorst)} ms`,
    `gateway RSS: ${d.rssBeforeLoadMb.toFixed(1)} MB before load, ${d.rssAfterLoadMb.toFixed(1)} MB after, peak ${d.peakRssMb.toFixed(1)} MB`,
    `five guardrail checks (guarded vs gateway, chat): added p50 at 1 connection ${ms(d.guardrailAddedP50Ms1)} ms, added gateway CPU per request at 32 connections ${ms(d.guardrailAddedCpuMsPerRequest32)} ms, throughput at 32 connections ${pct(d.guardrailThroughputRatio32)} of the unguarded`,
  ].join('\n');
}

/** The loud part: any failed request means the figures measured something other than success. */
export function failureReport(runs: RunFigures[]): string | null {
  const failed = runs.filter((r) => failures(r) > 0);
  if (failed.length === 0) return null;
  const total = sum(failed.map(failures));
  const lines = [
    '',
    '!'.repeat(78),
    `!!! ${total} REQUEST(S) FAILED: the figures above are NOT a clean run`,
    '!'.repeat(78),
  ];
  for (const r of failed) {
    lines.push(
      `  ${r.kind} via ${r.via} x${r.connections}: non-2xx ${JSON.stringify(r.non2xx)}, errors ${JSON.stringify(r.errors)}, unexpected bodies ${r.badBodies}`,
    );
    for (const example of r.examples) lines.push(`      ${example.replace(/\s+/g, ' ')}`);
  }
  lines.push('!'.repeat(78), '');
  return lines.join('\n');
}

/** Other processes busy during a window (tests, builds) take cores from the three under test. */
export function backgroundWarning(runs: RunFigures[]): string | null {
  const worst = Math.max(0, ...runs.map((r) => r.cores.other).filter(Number.isFinite));
  if (worst < 0.2) return null;
  return `WARNING: other processes (or hypervisor steal) used up to ${worst.toFixed(2)} cores during a measured window ("other" column); figures are disturbed, run again on a quiet machine.`;
}

export function machineLine(m: Machine): string {
  return `machine: ${m.cpus} CPU(s), ${m.cpuModel}, Linux ${m.kernel}, Node ${m.node}, CLK_TCK ${m.clockTicks}`;
}

function table(header: string[], rows: string[][], leftColumns: number): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(3) : '-');
const msText = (value: number) => (Number.isFinite(value) ? `${value.toFixed(3)} ms` : '-');
const pct = (value: number) => (Number.isFinite(value) ? `${(value * 100).toFixed(1)}%` : '-');
