import {
  addHistogram,
  bucketValue,
  LATENCY_BUCKETS,
  type RollupMeasures,
} from '../../storage/repositories/request-logs.js';

/** Running totals of one group. Token averages count only requests that reported tokens. */
export interface Totals extends RollupMeasures {
  /** Earliest and latest created_at, ms. */
  first: number;
  last: number;
  /** Latency counts per histogram bucket, when a percentile was asked for. */
  histogram: Float64Array | null;
}

export const newTotals = (withHistogram: boolean): Totals => ({
  requests: 0,
  successes: 0,
  cacheHits: 0,
  semanticHits: 0,
  cost: 0,
  totalTokens: 0,
  tokenRows: 0,
  promptTokens: 0,
  promptRows: 0,
  completionTokens: 0,
  completionRows: 0,
  latencySum: 0,
  latencyMin: Infinity,
  latencyMax: -Infinity,
  first: Infinity,
  last: -Infinity,
  histogram: withHistogram ? new Float64Array(LATENCY_BUCKETS) : null,
});

/**
 * Adds one row of an aggregate query into `t`. Columns: the group, then requests, successes,
 * cache hits, semantic hits, cost, total tokens and the requests that reported them, the same for
 * prompt and completion tokens, latency sum, min and max, first and last created_at, and the
 * histogram (null when not asked for).
 */
export function addRow(t: Totals, r: readonly unknown[]): void {
  const n = (i: number) => Number(r[i] ?? 0);
  t.requests += n(1);
  t.successes += n(2);
  t.cacheHits += n(3);
  t.semanticHits += n(4);
  t.cost += n(5);
  t.totalTokens += n(6);
  t.tokenRows += n(7);
  t.promptTokens += n(8);
  t.promptRows += n(9);
  t.completionTokens += n(10);
  t.completionRows += n(11);
  t.latencySum += n(12);
  t.latencyMin = Math.min(t.latencyMin, n(13));
  t.latencyMax = Math.max(t.latencyMax, n(14));
  t.first = Math.min(t.first, Date.parse(r[15] as string));
  t.last = Math.max(t.last, Date.parse(r[16] as string));
  if (t.histogram) addHistogram(t.histogram, r[17] as Uint8Array | null);
}

/** Adds the totals of `t` into `into`, histograms included when both have one. */
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
  into.latencyMin = Math.min(into.latencyMin, t.latencyMin);
  into.latencyMax = Math.max(into.latencyMax, t.latencyMax);
  into.first = Math.min(into.first, t.first);
  into.last = Math.max(into.last, t.last);
  if (into.histogram && t.histogram)
    for (let b = 0; b < into.histogram.length; b++) into.histogram[b]! += t.histogram[b]!;
}

/**
 * Nearest-rank percentile from the histogram: the rank ⌈p·n⌉ is found in the buckets, and the
 * bucket's representative value (within 2.44 % of every latency in it) is returned, kept within
 * the group's smallest and largest latency. Rank 1 and rank n are those two, exactly.
 */
export function percentile(t: Totals, p: number): number | null {
  const n = t.requests;
  if (n === 0 || !t.histogram) return null;
  const rank = Math.max(1, Math.ceil(p * n));
  if (rank === 1) return round3(t.latencyMin);
  if (rank >= n) return round3(t.latencyMax);
  let seen = 0;
  for (let b = 0; b < t.histogram.length; b++) {
    seen += t.histogram[b]!;
    if (seen >= rank) return round3(Math.min(t.latencyMax, Math.max(t.latencyMin, bucketValue(b))));
  }
  return round3(t.latencyMax);
}

const round3 = (value: number) => Number(value.toFixed(3));
