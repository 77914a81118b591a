import type { Machine } from './proc.js';
import { heapBreakdownLine, type HeapBreakdown } from './heap-breakdown.js';

/**
 * `proxy`: through the do-nothing Node proxy (`scripts/bench/noop-proxy.ts`), the floor every
 * figure is compared with; the others through svcgw: `gateway` with the headers only,
 * `guarded` with a config of five built-in input checks, `fallback` with a config of two
 * targets, `cached` with the simple cache on (every measured answer a hit); the configs are in
 * `scripts/bench/setup.ts`.
 */
export const VIAS = ['direct', 'proxy', 'gateway', 'guarded', 'fallback', 'cached'] as const;
export type Via = (typeof VIAS)[number];
export type Kind = 'chat' | 'stream';
/** The paths through svcgw, each reported against the proxy. */
export type GatewayVia = Exclude<Via, 'direct' | 'proxy'>;
export const GATEWAY_VIAS: readonly GatewayVia[] = ['gateway', 'guarded', 'fallback', 'cached'];

/** One measured run: one kind of request, one path, one concurrency. */
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
  /** The CPU of the process in the middle (proxy or gateway) in the window ÷ the good responses in it; null for direct. */
  cpuMsPerRequest: number | null;
  /** CPU used in the window, in cores (1.0 = one core busy all the time); `middle` is the proxy or the gateway. */
  cores: { middle: number; mock: number; loadgen: number; other: number };
  non2xx: Record<string, number>;
  errors: Record<string, number>;
  badBodies: number;
  examples: string[];
}

/** Resident memory of one process, MiB. */
export interface MemoryFigures {
  before: number;
  /**
   * Right after the last measured window that went through this process: the proxy and the
   * gateway are compared at the same moment of their own load, not at the end of the bench,
   * by which time a process loaded earlier has had a minute to give memory back.
   */
  after: number;
  /** At the end of the bench. */
  atEnd: number;
  peak: number;
  /** The gateway's own account of it (its metrics), before the load and right after its last run. */
  heap?: { before: HeapBreakdown | null; after: HeapBreakdown | null };
}

/** svcgw (plain or guarded) against the do-nothing proxy: the figures issue #19 sets targets on. */
export interface AgainstProxy {
  /** req/s ÷ the proxy's, 32 connections. */
  throughput32: number;
  streamThroughput32: number;
  /** CPU per request ÷ the proxy's, 32 connections. */
  cpuPerRequest32: number;
  streamCpuPerRequest32: number;
  /** p50 minus the proxy's p50, non-streaming, 1 connection, ms. */
  addedOverProxyP50Ms1: number;
  /** First stream chunk p50 minus direct's (and minus the proxy's), 1 connection, ms. */
  firstChunkOverDirectP50Ms1: number;
  firstChunkOverProxyP50Ms1: number;
}

export interface Derived {
  gateway: AgainstProxy;
  guarded: AgainstProxy;
  fallback: AgainstProxy;
  cached: AgainstProxy;
  /** The proxy against the mock directly: what Node itself costs on this machine. */
  proxy: {
    throughputVsDirect32: number;
    cpuMsPerRequest32: number;
    addedOverDirectP50Ms1: number;
    firstChunkOverDirectP50Ms1: number;
  };
  /** Earlier issues' figures, kept for the history in docs/benchmarks.md. */
  throughputVsDirect32: number;
  streamThroughputVsDirect32: number;
  gatewayCpuMsPerRequest32: number;
  gatewayCpuMsPerRequestWorst: number;
  memory: { gateway: MemoryFigures; proxy: MemoryFigures };
  /** Gateway RSS after load ÷ the proxy's. */
  rssRatio: number;
  /** What each config adds to the plain gateway path (NaN when not run). */
  overGateway: Record<Exclude<GatewayVia, 'gateway'>, OverGateway>;
  /** What five built-in guardrail checks add, guarded minus gateway (NaN when not run); kept for the history. */
  guardrailAddedP50Ms1: number;
  guardrailAddedCpuMsPerRequest32: number;
  guardrailThroughputRatio32: number;
}

/** One config's path against the plain gateway's, chat. */
export interface OverGateway {
  /** p50 minus the gateway's, 1 connection, ms. */
  addedP50Ms1: number;
  /** CPU per request minus the gateway's, 32 connections, ms. */
  addedCpuMsPerRequest32: number;
  /** req/s ÷ the gateway's, 32 connections. */
  throughputRatio32: number;
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

/**
 * One figure set per kind, path and concurrency out of repeated runs (`--repeat`), each figure the
 * median of the runs' own: on a 2-core machine two runs a minute apart differ by more than most
 * changes do. Counts (requests, failures) are summed.
 */
export function medianRuns(runs: RunFigures[]): RunFigures[] {
  const groups = new Map<string, RunFigures[]>();
  for (const run of runs) {
    const key = `${run.kind}/${run.via}/${run.connections}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0]!;
    if (group.length === 1) return first;
    const mid = (pick: (r: RunFigures) => number | null): number | null => {
      const values = group.map(pick).filter((v): v is number => v !== null);
      return values.length === 0 ? null : median(values);
    };
    return {
      kind: first.kind,
      via: first.via,
      connections: first.connections,
      requests: sum(group.map((r) => r.requests)),
      windowMs: sum(group.map((r) => r.windowMs)),
      rps: mid((r) => r.rps)!,
      p50Ms: mid((r) => r.p50Ms)!,
      p99Ms: mid((r) => r.p99Ms)!,
      firstChunkP50Ms: mid((r) => r.firstChunkP50Ms),
      firstChunkP99Ms: mid((r) => r.firstChunkP99Ms),
      cpuMsPerRequest: mid((r) => r.cpuMsPerRequest),
      cores: {
        middle: mid((r) => r.cores.middle)!,
        mock: mid((r) => r.cores.mock)!,
        loadgen: mid((r) => r.cores.loadgen)!,
        other: mid((r) => r.cores.other)!,
      },
      non2xx: addCounts(group.map((r) => r.non2xx)),
      errors: addCounts(group.map((r) => r.errors)),
      badBodies: sum(group.map((r) => r.badBodies)),
      examples: [...new Set(group.flatMap((r) => r.examples))].slice(0, 5),
    };
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

function addCounts(counts: Array<Record<string, number>>): Record<string, number> {
  const total: Record<string, number> = {};
  for (const c of counts) for (const [k, n] of Object.entries(c)) total[k] = (total[k] ?? 0) + n;
  return total;
}

export function find(runs: RunFigures[], kind: Kind, via: Via, connections: number): RunFigures | undefined {
  return runs.find((r) => r.kind === kind && r.via === via && r.connections === connections);
}

export function derive(runs: RunFigures[], memory: { gateway: MemoryFigures; proxy: MemoryFigures }): Derived {
  const get = (kind: Kind, via: Via, c: number) => find(runs, kind, via, c);
  const rps = (kind: Kind, via: Via) => get(kind, via, 32)?.rps ?? NaN;
  const cpu = (kind: Kind, via: Via) => get(kind, via, 32)?.cpuMsPerRequest ?? NaN;
  const p50 = (via: Via) => get('chat', via, 1)?.p50Ms ?? NaN;
  const chunk = (via: Via) => get('stream', via, 1)?.firstChunkP50Ms ?? NaN;
  const against = (via: GatewayVia): AgainstProxy => ({
    throughput32: rps('chat', via) / rps('chat', 'proxy'),
    streamThroughput32: rps('stream', via) / rps('stream', 'proxy'),
    cpuPerRequest32: cpu('chat', via) / cpu('chat', 'proxy'),
    streamCpuPerRequest32: cpu('stream', via) / cpu('stream', 'proxy'),
    addedOverProxyP50Ms1: p50(via) - p50('proxy'),
    firstChunkOverDirectP50Ms1: chunk(via) - chunk('direct'),
    firstChunkOverProxyP50Ms1: chunk(via) - chunk('proxy'),
  });
  const overGateway = (via: GatewayVia): OverGateway => ({
    addedP50Ms1: p50(via) - p50('gateway'),
    addedCpuMsPerRequest32: cpu('chat', via) - cpu('chat', 'gateway'),
    throughputRatio32: rps('chat', via) / rps('chat', 'gateway'),
  });
  const gatewayCpu = runs
    .filter((r) => r.via === 'gateway' && r.cpuMsPerRequest !== null)
    .map((r) => r.cpuMsPerRequest!);
  return {
    gateway: against('gateway'),
    guarded: against('guarded'),
    fallback: against('fallback'),
    cached: against('cached'),
    proxy: {
      throughputVsDirect32: rps('chat', 'proxy') / rps('chat', 'direct'),
      cpuMsPerRequest32: cpu('chat', 'proxy'),
      addedOverDirectP50Ms1: p50('proxy') - p50('direct'),
      firstChunkOverDirectP50Ms1: chunk('proxy') - chunk('direct'),
    },
    throughputVsDirect32: rps('chat', 'gateway') / rps('chat', 'direct'),
    streamThroughputVsDirect32: rps('stream', 'gateway') / rps('stream', 'direct'),
    gatewayCpuMsPerRequest32: cpu('chat', 'gateway'),
    gatewayCpuMsPerRequestWorst: gatewayCpu.length > 0 ? Math.max(...gatewayCpu) : NaN,
    memory,
    rssRatio: memory.gateway.after / memory.proxy.after,
    overGateway: {
      guarded: overGateway('guarded'),
      fallback: overGateway('fallback'),
      cached: overGateway('cached'),
    },
    guardrailAddedP50Ms1: p50('guarded') - p50('gateway'),
    guardrailAddedCpuMsPerRequest32: cpu('chat', 'guarded') - cpu('chat', 'gateway'),
    guardrailThroughputRatio32: rps('chat', 'guarded') / rps('chat', 'gateway'),
  };
}

/**
 * Issue #19's targets, as ratios to the do-nothing proxy measured in the same run (so that runs
 * on different machines compare); printed side by side with the figures, never asserted.
 */
export function checkTargets(d: Derived): TargetCheck[] {
  const met = (value: number, ok: (v: number) => boolean) => (Number.isFinite(value) ? ok(value) : null);
  const rows = (via: GatewayVia, a: AgainstProxy): TargetCheck[] => [
    {
      name: `${via}: throughput ÷ proxy's, 32 connections`,
      target: '>= 0.60x',
      measured: `${times(a.throughput32)} (stream ${times(a.streamThroughput32)})`,
      met: met(a.throughput32, (v) => v >= 0.6),
    },
    {
      name: `${via}: CPU per request ÷ proxy's, 32 connections`,
      target: '<= 1.60x',
      measured: `${times(a.cpuPerRequest32)} (stream ${times(a.streamCpuPerRequest32)})`,
      met: met(a.cpuPerRequest32, (v) => v <= 1.6),
    },
    {
      name: `${via}: added p50 over the proxy's, 1 connection`,
      target: '<= 0.100 ms',
      measured: msText(a.addedOverProxyP50Ms1),
      met: met(a.addedOverProxyP50Ms1, (v) => v <= 0.1),
    },
    {
      name: `${via}: 1st stream chunk p50 over direct, 1 connection`,
      target: '<= 1.000 ms',
      measured: msText(a.firstChunkOverDirectP50Ms1),
      met: met(a.firstChunkOverDirectP50Ms1, (v) => v <= 1),
    },
  ];
  return [
    ...GATEWAY_VIAS.flatMap((via) => rows(via, d[via])),
    {
      name: "gateway RSS after load ÷ proxy's",
      target: '<= 1.25x',
      measured: `${times(d.rssRatio)} (${d.memory.gateway.after.toFixed(1)} / ${d.memory.proxy.after.toFixed(1)} MB)`,
      met: met(d.rssRatio, (v) => v <= 1.25),
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
    'CPU ms/req',
    'cores mid/mock/load/other',
  ];
  const rows = runs.map((r) => [
    scenario(r),
    r.via,
    String(r.connections),
    r.rps.toFixed(0),
    ms(r.p50Ms),
    ms(r.p99Ms),
    r.firstChunkP50Ms === null ? '-' : ms(r.firstChunkP50Ms),
    r.firstChunkP99Ms === null ? '-' : ms(r.firstChunkP99Ms),
    String(r.requests),
    String(failures(r)),
    r.cpuMsPerRequest === null ? '-' : ms(r.cpuMsPerRequest),
    [r.cores.middle, r.cores.mock, r.cores.loadgen, r.cores.other].map((c) => c.toFixed(2)).join('/'),
  ]);
  return table(header, rows, 4);
}

/**
 * Every run's figures as ratios to the proxy's run of the same scenario (and the latencies as
 * differences, since a ratio of two sub-millisecond latencies says little), so that runs on
 * different machines compare.
 */
export function ratiosTable(runs: RunFigures[]): string {
  const header = [
    'scenario',
    'via',
    'conn',
    "req/s ÷ proxy's",
    "CPU/req ÷ proxy's",
    'p50 − proxy ms',
    'p50 − direct ms',
    '1st chunk − direct ms',
  ];
  const rows = runs.map((r) => {
    const proxy = find(runs, r.kind, 'proxy', r.connections);
    const direct = find(runs, r.kind, 'direct', r.connections);
    const cpu = r.cpuMsPerRequest !== null && proxy?.cpuMsPerRequest ? r.cpuMsPerRequest / proxy.cpuMsPerRequest : NaN;
    const chunk =
      r.firstChunkP50Ms !== null && direct?.firstChunkP50Ms != null ? r.firstChunkP50Ms - direct.firstChunkP50Ms : NaN;
    return [
      scenario(r),
      r.via,
      String(r.connections),
      times(proxy ? r.rps / proxy.rps : NaN),
      times(cpu),
      ms(proxy ? r.p50Ms - proxy.p50Ms : NaN),
      ms(direct ? r.p50Ms - direct.p50Ms : NaN),
      ms(chunk),
    ];
  });
  return table(header, rows, 3);
}

export function targetsTable(checks: TargetCheck[]): string {
  return table(
    ['target (issue #19, against the do-nothing proxy)', 'wanted', 'measured', ''],
    checks.map((c) => [c.name, c.target, c.measured, c.met === null ? 'not run' : c.met ? 'met' : 'MISSED']),
    1,
  );
}

function heapLines(heap: MemoryFigures['heap']): string[] {
  if (!heap) return [];
  return [
    ...(heap.before ? [heapBreakdownLine('before load', heap.before)] : []),
    ...(heap.after ? [heapBreakdownLine('right after its last run', heap.after)] : []),
  ];
}

export function derivedLines(d: Derived): string {
  const rss = (m: MemoryFigures) =>
    `${m.before.toFixed(1)} MB before load, ${m.after.toFixed(1)} MB right after its last run, ${m.atEnd.toFixed(1)} MB at the end of the bench, peak ${m.peak.toFixed(1)} MB`;
  return [
    `the proxy itself: ${pct(d.proxy.throughputVsDirect32)} of direct throughput at 32 connections, ${ms(d.proxy.cpuMsPerRequest32)} ms CPU per request, ${signed(d.proxy.addedOverDirectP50Ms1)} ms p50 and ${signed(d.proxy.firstChunkOverDirectP50Ms1)} ms to the first stream chunk over direct at 1 connection`,
    `gateway ÷ direct throughput at 32 connections: ${pct(d.throughputVsDirect32)} (streaming ${pct(d.streamThroughputVsDirect32)}); gateway CPU per request ${ms(d.gatewayCpuMsPerRequest32)} ms (worst run ${ms(d.gatewayCpuMsPerRequestWorst)} ms)`,
    `gateway RSS: ${rss(d.memory.gateway)}`,
    ...heapLines(d.memory.gateway.heap),
    `proxy RSS: ${rss(d.memory.proxy)}`,
    ...(
      [
        ['guarded', 'five guardrail checks'],
        ['fallback', 'a fallback config of two targets'],
        ['cached', 'the simple cache, every answer a hit'],
      ] as const
    ).map(([via, what]) => {
      const o = d.overGateway[via];
      return `${what} (${via} vs gateway, chat): added p50 at 1 connection ${signed(o.addedP50Ms1)} ms, added gateway CPU per request at 32 connections ${signed(o.addedCpuMsPerRequest32)} ms, throughput at 32 connections ${pct(o.throughputRatio32)} of the plain gateway's`;
    }),
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
const signed = (value: number) => (Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(3)}` : '-');
const msText = (value: number) => (Number.isFinite(value) ? `${value.toFixed(3)} ms` : '-');
const times = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : '-');
const scenario = (r: RunFigures) => (r.kind === 'chat' ? 'chat' : 'chat stream');
const pct = (value: number) => (Number.isFinite(value) ? `${(value * 100).toFixed(1)}%` : '-');
