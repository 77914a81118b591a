import { aggregate, newTotals, percentile, sortedLatencies, type RowFilter, type Totals } from './aggregate.js';
import { totalsHelpers } from './columns.js';
import type { LogStore } from './log-store.js';

const { average, money, round } = totalsHelpers;

type Values = Record<string, number | null>;

interface Metric {
  latencies?: boolean;
  /** Over the whole window, and per bucket; an empty bucket has totals of zero (averages null). */
  values(t: Totals, sorted: Float64Array | null): Values;
  /** The fields of `values` that the summary carries (default: all). */
  summary?: readonly string[];
}

const errors = (t: Totals) => t.requests - t.successes;

/** The graphs, named and shaped as the reference analytics graphs are (`summary` + `data_points`). */
export const METRICS: Record<string, Metric> = {
  requests: { values: (t) => ({ total: t.requests }) },
  cost: { values: (t) => ({ total: money(t.cost), avg: t.requests === 0 ? null : Number((t.cost / t.requests).toPrecision(12)) }) },
  latency: {
    latencies: true,
    values: (t, sorted) => ({ avg: average(t.latencySum, t.requests), p50: percentile(sorted!, 0.5), p90: percentile(sorted!, 0.9), p95: percentile(sorted!, 0.95), p99: percentile(sorted!, 0.99) }),
  },
  tokens: { values: (t) => ({ total: t.totalTokens, avg: average(t.totalTokens, t.tokenRows) }) },
  errors: { values: (t) => ({ total: errors(t) }) },
  'errors/rate': { values: (t) => ({ rate: t.requests === 0 ? null : round(errors(t) / t.requests, 4) }) },
  'cache/hit-rate': {
    values: (t) => ({ total: t.cacheHits, simple_hits: t.cacheHits - t.semanticHits, semantic_hits: t.semanticHits, rate: average(t.cacheHits, t.requests, 4) }),
    summary: ['total', 'rate'],
  },
};

export const METRIC_NAMES = Object.keys(METRICS);

export const INTERVALS = { hour: 3_600_000, day: 86_400_000 } as const;
export type Interval = keyof typeof INTERVALS;

/** Hourly up to two days, daily beyond: at most a few hundred points by default. */
export const defaultInterval = (from: number, to: number): Interval => (to - from <= 2 * INTERVALS.day ? 'hour' : 'day');

/**
 * One metric over time, in UTC-aligned buckets from the one holding `from` to the one holding
 * `to`; buckets without requests are present, with zero totals.
 */
export function graph(store: LogStore, filter: RowFilter, metric: Metric, interval: Interval) {
  const ms = INTERVALS[interval];
  const keep = metric.latencies === true;
  const buckets = aggregate(store, filter, (s, row) => Math.floor(s.time[row]! / ms), { latencies: keep });
  const whole = newTotals(false);
  for (const t of buckets.values()) merge(whole, t);
  if (keep) whole.latencies = concatSorted([...buckets.values()].map(sortedLatencies));
  const points = [];
  for (let b = Math.floor(filter.from / ms); b <= Math.floor(filter.to / ms); b++) {
    const t = buckets.get(b) ?? newTotals(keep);
    points.push({ timestamp: new Date(b * ms).toISOString(), ...metric.values(t, keep ? sortedLatencies(t) : null) });
  }
  const all = metric.values(whole, keep ? sortedLatencies(whole) : null);
  const summary = metric.summary ? Object.fromEntries(metric.summary.map((k) => [k, all[k] ?? null])) : all;
  return { object: 'analytics-graph' as const, interval, start_time: new Date(filter.from).toISOString(), end_time: new Date(filter.to).toISOString(), summary, data_points: points };
}

/** Adds the totals of `t` into `into` (not the latencies). */
export function merge(into: Totals, t: Totals): void {
  into.requests += t.requests;
  into.successes += t.successes;
  into.cacheHits += t.cacheHits;
  into.semanticHits += t.semanticHits;
  into.cost += t.cost;
  into.totalTokens += t.totalTokens;
  into.tokenRows += t.tokenRows;
  into.promptTokens += t.promptTokens;
  into.promptRows += t.promptRows;
  into.completionTokens += t.completionTokens;
  into.completionRows += t.completionRows;
  into.latencySum += t.latencySum;
  into.first = Math.min(into.first, t.first);
  into.last = Math.max(into.last, t.last);
}

function concatSorted(parts: Float64Array[]): Float64Array {
  const all = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all.sort();
}
