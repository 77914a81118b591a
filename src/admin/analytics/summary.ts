import { totalsHelpers } from './columns.js';
import type { AnalyticsReader, RowFilter } from './reader.js';
import { newTotals, percentile } from './totals.js';

const { average, money, iso } = totalsHelpers;

/** Every headline figure of the window in one object (`GET /v1/analytics/summary`). */
export async function summary(reader: AnalyticsReader, filter: RowFilter) {
  const t = (await reader.aggregate(filter, { by: 'all' }, { latencies: true })).get(0) ?? newTotals(true);
  const errors = t.requests - t.successes;
  return {
    object: 'analytics-summary' as const,
    start_time: new Date(filter.from).toISOString(),
    end_time: new Date(filter.to).toISOString(),
    summary: {
      requests: t.requests,
      successes: t.successes,
      errors,
      success_rate: average(t.successes, t.requests, 4),
      error_rate: average(errors, t.requests, 4),
      cost: money(t.cost),
      cost_currency: 'USD',
      total_tokens: t.totalTokens,
      prompt_tokens: t.promptTokens,
      completion_tokens: t.completionTokens,
      avg_tokens: average(t.totalTokens, t.tokenRows),
      avg_latency: average(t.latencySum, t.requests),
      p50_latency: percentile(t, 0.5),
      p90_latency: percentile(t, 0.9),
      p95_latency: percentile(t, 0.95),
      p99_latency: percentile(t, 0.99),
      cache_hits: t.cacheHits,
      cache_hit_rate: average(t.cacheHits, t.requests, 4),
      first_seen: iso(t.first),
      last_seen: iso(t.last),
    },
  };
}
