import { totalsHelpers } from './columns.js';
import { buckets, CACHE_HIT_RATE, graph, graphBody, INTERVALS, type Interval } from './graphs.js';
import type { CacheLatency, LogAnalytics, RescuedRow } from './log-analytics.js';
import type { AnalyticsReader, RowFilter } from './reader.js';
import { costFields, latencyFields, orZero, rateFields } from './reference-units.js';

const { average } = totalsHelpers;

/** `users`: distinct users (metadata `_user`) over the window and per bucket. */
export async function usersGraph(logs: LogAnalytics, filter: RowFilter, interval: Interval) {
  const [whole, per] = await Promise.all([logs.users(filter, null), logs.users(filter, INTERVALS[interval])]);
  const points = buckets(filter, interval).map(({ bucket, timestamp }) => ({
    timestamp,
    total: per.get(bucket)?.users ?? 0,
  }));
  return graphBody(filter, interval, { total: whole.get(0)?.users ?? 0 }, points);
}

/** `users/requests`: requests per user, over the window (with the totals behind it) and per bucket. */
export async function userRequestsGraph(logs: LogAnalytics, filter: RowFilter, interval: Interval) {
  const [whole, per] = await Promise.all([logs.users(filter, null), logs.users(filter, INTERVALS[interval])]);
  const all = whole.get(0) ?? { users: 0, requests: 0 };
  const points = buckets(filter, interval).map(({ bucket, timestamp }) => {
    const b = per.get(bucket);
    return { timestamp, avg: b ? orZero(average(b.requests, b.users, 2)) : 0 };
  });
  return graphBody(
    filter,
    interval,
    { total: all.requests, unique: all.users, avg: orZero(average(all.requests, all.users, 2)) },
    points,
  );
}

/** Errors (requests without is_success) per status code over the window, most first. */
async function errorsByStatus(reader: AnalyticsReader, filter: RowFilter) {
  const byStatus = await reader.aggregate(filter, { by: 'column', column: 'status_code' }, { latencies: false });
  return [...byStatus.entries()]
    .map(([status, t]) => ({ status_code: Number(status), count: t.requests - t.successes }))
    .filter((row) => row.count > 0)
    .sort((a, b) => b.count - a.count || a.status_code - b.status_code);
}

/** `errors/status-codes`: errors per status code over the window. */
export async function errorStatusCodesGraph(reader: AnalyticsReader, filter: RowFilter) {
  const rows = await errorsByStatus(reader, filter);
  const total = rows.reduce((sum, row) => sum + row.count, 0);
  return graphBody(filter, null, { total_errors: total, unique_error_codes: rows.length }, rows);
}

/** `errors/stacks`: per bucket, the errors of each status code. */
export async function errorStacksGraph(reader: AnalyticsReader, filter: RowFilter, interval: Interval) {
  const codes = await errorsByStatus(reader, filter);
  const series = await Promise.all(
    codes.map(async ({ status_code }) => ({
      status_code,
      perBucket: await reader.aggregate(
        { ...filter, statusCodes: [status_code] },
        { by: 'time', interval },
        { latencies: false },
      ),
    })),
  );
  const points = buckets(filter, interval).map(({ bucket, timestamp }) => ({
    timestamp,
    stats: series
      .map(({ status_code, perBucket }) => {
        const t = perBucket.get(bucket);
        return { response_status_code: status_code, count: t ? t.requests - t.successes : 0 };
      })
      .filter((stat) => stat.count > 0),
  }));
  return graphBody(filter, interval, { total: codes.reduce((sum, row) => sum + row.count, 0) }, points);
}

/**
 * How a rescued request was saved: by a fallback when the target that answered is not the one
 * tried first; otherwise by retries of that target (how many it took).
 */
function rescue(row: RescuedRow): { fallback: true } | { fallback: false; retries: number } {
  const first = row.attempts[0]?.target;
  const last = row.attempts.at(-1)?.target;
  return first !== last ? { fallback: true } : { fallback: false, retries: row.attempts.length - 1 };
}

/** `requests/rescued`: successful requests that needed retries or a fallback, per bucket. */
export async function rescuedGraph(logs: LogAnalytics, filter: RowFilter, interval: Interval) {
  const ms = INTERVALS[interval];
  const per = new Map<number, { retries: Map<number, number>; fallback: number }>();
  let retry = 0;
  let fallback = 0;
  for (const row of await logs.rescued(filter)) {
    const how = rescue(row);
    const bucket = Math.floor(Date.parse(row.createdAt) / ms);
    let b = per.get(bucket);
    if (!b) per.set(bucket, (b = { retries: new Map(), fallback: 0 }));
    if (how.fallback) {
      fallback++;
      b.fallback++;
    } else if (how.retries > 0) {
      retry++;
      b.retries.set(how.retries, (b.retries.get(how.retries) ?? 0) + 1);
    }
  }
  const points = buckets(filter, interval).map(({ bucket, timestamp }) => {
    const b = per.get(bucket);
    return {
      timestamp,
      retry: [...(b?.retries.entries() ?? [])]
        .sort(([a], [c]) => a - c)
        .map(([retry_success_count, count]) => ({ retry_success_count, count })),
      fallback: b?.fallback ?? 0,
    };
  });
  return graphBody(filter, interval, { retry, fallback }, points);
}

/**
 * `cache/hit-rate`: hits and their rate per bucket (rollups), and the savings of the hits so far
 * in the window (`cumulative_*_cache_savings`, cents, with `_usd` beside): what the provider
 * calls that the cached answers replaced would have cost, as recorded on each hit.
 */
export async function cacheHitRateGraph(
  reader: AnalyticsReader,
  logs: LogAnalytics,
  filter: RowFilter,
  interval: Interval,
) {
  const [body, savings] = await Promise.all([
    graph(reader, filter, CACHE_HIT_RATE, interval),
    logs.cacheSavings(filter, INTERVALS[interval]),
  ]);
  let simple = 0;
  let semantic = 0;
  const points = buckets(filter, interval).map(({ bucket }, index) => {
    simple += savings.get(bucket)?.simple ?? 0;
    semantic += savings.get(bucket)?.semantic ?? 0;
    return {
      ...body.data_points[index]!,
      ...costFields('cumulative_simple_cache_savings', simple),
      ...costFields('cumulative_semantic_cache_savings', semantic),
    };
  });
  return { ...body, data_points: points };
}

const hitAverage = (c: CacheLatency | undefined) => (c ? average(c.hitLatencySum, c.hits) : null);

/** `cache/latency`: the average latency of cache hits, per bucket. */
export async function cacheLatencyGraph(logs: LogAnalytics, filter: RowFilter, interval: Interval) {
  const [whole, per] = await Promise.all([
    logs.cacheLatency(filter, null),
    logs.cacheLatency(filter, INTERVALS[interval]),
  ]);
  const points = buckets(filter, interval).map(({ bucket, timestamp }) => ({
    timestamp,
    ...latencyFields('avg', hitAverage(per.get(bucket))),
  }));
  return graphBody(filter, interval, latencyFields('avg', hitAverage(whole.get(0))), points);
}

/**
 * `GET /v1/analytics/summary/cache`: cache hits, their average latency, all requests, and
 * `cache_speedup`, the share of latency a hit saved against the average request that went to
 * a provider (1 − hit latency / other latency; in percent, 0 without both kinds).
 */
export async function cacheSummary(logs: LogAnalytics, filter: RowFilter) {
  const c = (await logs.cacheLatency(filter, null)).get(0) ?? {
    hits: 0,
    hitLatencySum: 0,
    requests: 0,
    missLatencySum: 0,
  };
  const hit = average(c.hitLatencySum, c.hits);
  const miss = average(c.missLatencySum, c.requests - c.hits);
  return {
    object: 'analytics-summary' as const,
    start_time: new Date(filter.from).toISOString(),
    end_time: new Date(filter.to).toISOString(),
    summary: {
      hits: c.hits,
      ...latencyFields('avg_latency', hit),
      total_requests: c.requests,
      ...rateFields(
        'cache_speedup',
        hit === null || miss === null || miss === 0 ? null : Number((1 - hit / miss).toFixed(4)),
      ),
    },
  };
}
