import { invalid } from '../../lib/errors.js';
import { totalsHelpers } from './columns.js';
import type { AnalyticsReader, RowFilter } from './reader.js';
import { costFields, latencyFields, orZero, rateFields } from './reference-units.js';
import { merge, newTotals, percentile, type Totals } from './totals.js';

const { average, round } = totalsHelpers;

type Values = Record<string, number | null>;

interface Metric {
  latencies?: boolean;
  /** Over the whole window, and per bucket; an empty bucket has totals and averages of 0 (companions null). */
  values(t: Totals): Values;
  /** The fields of `values` that the summary carries (default: all). */
  summary?: readonly string[];
}

const errors = (t: Totals) => t.requests - t.successes;

/** The graphs, named and shaped as the reference analytics graphs are (`summary` + `data_points`). */
export const METRICS: Record<string, Metric> = {
  requests: { values: (t) => ({ total: t.requests }) },
  cost: {
    values: (t) => ({
      ...costFields('total', t.cost),
      ...costFields('avg', t.requests === 0 ? null : t.cost / t.requests),
    }),
    summary: ['total', 'avg', 'total_usd', 'avg_usd'],
  },
  latency: {
    latencies: true,
    values: (t) => ({
      ...latencyFields('avg', average(t.latencySum, t.requests)),
      ...latencyFields('p50', percentile(t, 0.5)),
      ...latencyFields('p90', percentile(t, 0.9)),
      ...latencyFields('p95', percentile(t, 0.95)),
      ...latencyFields('p99', percentile(t, 0.99)),
    }),
  },
  tokens: { values: (t) => ({ total: t.totalTokens, avg: orZero(average(t.totalTokens, t.tokenRows)) }) },
  errors: { values: (t) => ({ total: errors(t) }) },
  'errors/rate': { values: (t) => rateFields('rate', t.requests === 0 ? null : round(errors(t) / t.requests, 4)) },
};

/** The graphs drawn from the rollups: these, and `cache/hit-rate` (whose savings log-graphs.ts adds). */
export const METRIC_NAMES = [...Object.keys(METRICS), 'cache/hit-rate'];

/** `cache/hit-rate` from the rollups; its cumulative savings come from the request logs (log-graphs.ts). */
export const CACHE_HIT_RATE: Metric = {
  values: (t) => ({
    total: t.cacheHits,
    simple_hits: t.cacheHits - t.semanticHits,
    semantic_hits: t.semanticHits,
    ...rateFields('rate', average(t.cacheHits, t.requests, 4)),
  }),
  summary: ['total', 'rate', 'rate_fraction'],
};

export const INTERVALS = { hour: 3_600_000, day: 86_400_000 } as const;
export type Interval = keyof typeof INTERVALS;

/** Hourly up to two days, daily beyond: at most a few hundred points by default. */
export const defaultInterval = (from: number, to: number): Interval =>
  to - from <= 2 * INTERVALS.day ? 'hour' : 'day';

/** The answer of a graph: the window, its summary and points (time series carry their interval). */
export function graphBody<S, P>(filter: RowFilter, interval: Interval | null, summary: S, points: P[]) {
  return {
    object: 'analytics-graph' as const,
    ...(interval === null ? {} : { interval }),
    start_time: new Date(filter.from).toISOString(),
    end_time: new Date(filter.to).toISOString(),
    summary,
    data_points: points,
  };
}

/**
 * The most points a graph has. A window is bounded below by retention but not above: an
 * `end_time` in the year 9999 asked for ~2.9 million daily points, a 256 MB answer built while
 * every other request waited.
 */
export const MAX_GRAPH_POINTS = 10_000;

/** Every bucket of the window, from the one holding `from` to the one holding `to`: its number (ms / interval) and start. */
export function buckets(filter: RowFilter, interval: Interval): Array<{ bucket: number; timestamp: string }> {
  const ms = INTERVALS[interval];
  const first = Math.floor(filter.from / ms);
  const count = Math.floor(filter.to / ms) - first + 1;
  if (count > MAX_GRAPH_POINTS)
    throw invalid(
      'end_time',
      `The window holds ${count} ${interval === 'hour' ? 'hourly' : 'daily'} points; a graph has at most ${MAX_GRAPH_POINTS}. Bring end_time closer${interval === 'hour' ? ', or ask for interval=day' : ''}.`,
    );
  const out = [];
  for (let b = first; b < first + count; b++) out.push({ bucket: b, timestamp: new Date(b * ms).toISOString() });
  return out;
}

/**
 * One metric over time, in UTC-aligned buckets from the one holding `from` to the one holding
 * `to`; buckets without requests are present, with zero totals.
 */
export async function graph(reader: AnalyticsReader, filter: RowFilter, metric: Metric, interval: Interval) {
  const keep = metric.latencies === true;
  const totals = await reader.aggregate(filter, { by: 'time', interval }, { latencies: keep });
  const whole = newTotals(keep);
  for (const t of totals.values()) merge(whole, t);
  const points = buckets(filter, interval).map(({ bucket, timestamp }) => ({
    timestamp,
    ...metric.values(totals.get(bucket) ?? newTotals(keep)),
  }));
  const all = metric.values(whole);
  const summary = metric.summary ? Object.fromEntries(metric.summary.map((k) => [k, all[k] ?? null])) : all;
  return graphBody(filter, interval, summary, points);
}
