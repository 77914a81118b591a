import { describe, expect, it } from 'vitest';
import {
  checkTargets,
  derive,
  derivedLines,
  medianRuns,
  type RunFigures,
  type Via,
} from '../../scripts/bench/report.js';
import { parseHeapBreakdown } from '../../scripts/bench/heap-breakdown.js';
import { renderProcessMetrics } from '../../src/admin/observability/metrics/process-metrics.js';

function run(
  via: Via,
  connections: number,
  rps: number,
  cpu: number | null,
  extra: Partial<RunFigures> = {},
): RunFigures {
  return {
    kind: 'chat',
    via,
    connections,
    requests: Math.round(rps * 10),
    windowMs: 10_000,
    rps,
    p50Ms: 1,
    p99Ms: 2,
    firstChunkP50Ms: null,
    firstChunkP99Ms: null,
    cpuMsPerRequest: cpu,
    cores: { middle: 1, mock: 0.5, loadgen: 0.5, other: 0 },
    non2xx: {},
    errors: {},
    badBodies: 0,
    examples: [],
    ...extra,
  };
}

describe('bench report: repeated rounds', () => {
  it('reports the median of each figure and sums the counts', () => {
    const rounds = [
      run('gateway', 32, 5000, 0.2, { non2xx: { 429: 1 } }),
      run('gateway', 32, 9000, 0.1),
      run('gateway', 32, 6000, 0.4, { non2xx: { 429: 2, 500: 1 }, badBodies: 3 }),
      run('proxy', 32, 10_000, 0.1),
    ];
    const [gateway, proxy] = medianRuns(rounds);
    expect(gateway).toMatchObject({ via: 'gateway', rps: 6000, cpuMsPerRequest: 0.2, requests: 200_000 });
    expect(gateway!.non2xx).toEqual({ 429: 3, 500: 1 });
    expect(gateway!.badBodies).toBe(3);
    expect(proxy).toBe(rounds[3]); // a single run stays as it was
  });

  it('takes the middle two of an even number of rounds', () => {
    const [median] = medianRuns([run('proxy', 1, 100, 0.1), run('proxy', 1, 300, 0.3)]);
    expect(median!.rps).toBe(200);
    expect(median!.cpuMsPerRequest).toBeCloseTo(0.2);
  });
});

describe('bench report: a row per config', () => {
  it('checks each config path against the proxy, and says "not run" for a path left out', () => {
    const runs = [
      run('proxy', 32, 10_000, 0.1),
      run('gateway', 32, 7000, 0.15),
      run('fallback', 32, 5000, 0.2),
      run('cached', 32, 8000, 0.12),
    ];
    const memory = { before: 100, after: 120, atEnd: 120, peak: 130 };
    const derived = derive(runs, { gateway: memory, proxy: memory });
    expect(derived.overGateway.fallback.addedCpuMsPerRequest32).toBeCloseTo(0.05);
    expect(derived.overGateway.cached.throughputRatio32).toBeCloseTo(8 / 7);
    const checks = checkTargets(derived);
    const throughput = (via: string) => checks.find((c) => c.name === `${via}: throughput ÷ proxy's, 32 connections`);
    expect(throughput('gateway')!.met).toBe(true);
    expect(throughput('fallback')!.met).toBe(false); // 0.5x
    expect(throughput('cached')!.met).toBe(true);
    expect(throughput('guarded')!.met).toBeNull();
  });

  it("compares memory right after each process's own last load, not at the end of the bench", () => {
    // The proxy's last run was a minute before the end: by then it had given 55 MB back.
    const derived = derive([run('proxy', 32, 10_000, 0.1), run('gateway', 32, 7000, 0.15)], {
      gateway: { before: 125, after: 150, atEnd: 150, peak: 160 },
      proxy: { before: 62, after: 125, atEnd: 70, peak: 138 },
    });
    expect(derived.rssRatio).toBeCloseTo(1.2);
    const rss = checkTargets(derived).find((c) => c.name === "gateway RSS after load ÷ proxy's")!;
    expect(rss.met).toBe(true);
    expect(rss.measured).toBe('1.20x (150.0 / 125.0 MB)');
    expect(derivedLines(derived)).toContain(
      'proxy RSS: 62.0 MB before load, 125.0 MB right after its last run, 70.0 MB at the end of the bench, peak 138.0 MB',
    );
  });
});

describe('bench report: where the gateway memory sits', () => {
  it("reads the breakdown from the gateway's own metrics, as GET /metrics renders them", () => {
    const breakdown = parseHeapBreakdown(renderProcessMetrics())!;
    expect(breakdown).not.toBeNull();
    expect(breakdown.rss).toBeGreaterThan(breakdown.heapTotal);
    expect(breakdown.oldUsed).toBeGreaterThan(0);
    expect(breakdown.oldUsed).toBeLessThanOrEqual(breakdown.oldSize);
    expect(breakdown.heapTotal).toBeGreaterThanOrEqual(breakdown.oldSize + breakdown.newSize + breakdown.code);
  });

  it('says nothing of a scrape that lacks a figure (metrics of another kind, an error page)', () => {
    expect(parseHeapBreakdown('process_resident_memory_bytes 1000\n')).toBeNull();
    expect(parseHeapBreakdown('{"error":{"message":"No route"}}')).toBeNull();
  });

  it('prints RSS as the V8 heap plus what lies outside it, before and after the load', () => {
    const MiB = 1024 * 1024;
    const metrics = (old: number) =>
      [
        `process_resident_memory_bytes ${160 * MiB}`,
        `nodejs_heap_size_total_bytes ${84 * MiB}`,
        `nodejs_heap_space_size_total_bytes{space="old"} ${63 * MiB}`,
        `nodejs_heap_space_size_used_bytes{space="old"} ${old * MiB}`,
        `nodejs_heap_space_size_total_bytes{space="new"} ${16 * MiB}`,
        `nodejs_heap_space_size_total_bytes{space="code"} ${4 * MiB}`,
        `nodejs_heap_space_size_total_bytes{space="large_object"} ${1 * MiB}`,
      ].join('\n');
    const gateway = {
      before: 125,
      after: 160,
      atEnd: 160,
      peak: 170,
      heap: { before: parseHeapBreakdown(metrics(35)), after: parseHeapBreakdown(metrics(58)) },
    };
    const proxy = { before: 70, after: 120, atEnd: 120, peak: 130 };
    const lines = derivedLines(
      derive([run('proxy', 32, 10_000, 0.1), run('gateway', 32, 7000, 0.15)], { gateway, proxy }),
    );
    expect(lines).toContain(
      'gateway memory right after its last run: RSS 160.0 MB = V8 heap 84.0 MB (old generation 63.0 MB holding 58.0 MB, live or not yet collected; young 16.0; code 4.0; large objects 1.0) + 76.0 MB outside it',
    );
    expect(lines).toContain(
      'gateway memory before load: RSS 160.0 MB = V8 heap 84.0 MB (old generation 63.0 MB holding 35.0 MB',
    );
  });
});
