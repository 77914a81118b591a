import { expect } from 'vitest';
import { seededRandom } from '../../scripts/bench/seeded-random.js';
import type { Totals } from '../../src/admin/analytics/totals.js';
import type { RequestLogInsert } from '../../src/storage/repositories/request-logs.js';

/** Rows for the analytics path-equality tests (narrow and metadata rollups against raw rows). */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A Sunday noon; the rows span 40 days: hours, days, weeks and a four-week period. */
export const T0 = Date.parse('2026-03-01T12:00:00.000Z');
export const SPAN = 40 * DAY;

/** The bench's seeded generator, so that a failure comes back the same. */
export const random = seededRandom;

export const pick = <T>(items: readonly T[], r: number): T => items[Math.floor(r * items.length)]!;

/** `n` requests of one organisation over [T0, T0 + SPAN), with metadata pairs (env, team) and one value too long to sum. */
export function analyticsRows(n: number, organisationId: string): RequestLogInsert[] {
  const next = random(3);
  return Array.from({ length: n }, (_, i) => {
    const status = pick([200, 200, 200, 429, 500], next());
    const metadata: Record<string, string> = {};
    if (next() < 0.7) metadata.env = pick(['prod', 'dev'], next());
    if (next() < 0.5) metadata.team = pick(['a', 'b', 'c'], next());
    if (next() < 0.1) metadata.env = 'x'.repeat(300); // too long to be summed
    return {
      id: `log-${i}`,
      trace_id: `t-${i}`,
      request_id: `r-${i}`,
      organisation_id: organisationId,
      workspace_id: pick(['ws-1', 'ws-2'], next()),
      api_key_id: pick(['k1', 'k2', 'k3'], next()),
      provider: pick(['openai', 'anthropic', null], next()),
      credential_source: pick(['direct', null], next()),
      model: pick(['m1', 'm2', null], next()),
      endpoint_type: 'chatComplete',
      method: 'POST',
      path: '/v1/chat/completions',
      status_code: status,
      is_success: status === 200 ? 1 : 0,
      is_stream: 0,
      latency_ms: 1 + next() * 3000,
      prompt_tokens: status === 200 ? Math.floor(next() * 100) : null,
      completion_tokens: status === 200 ? Math.floor(next() * 100) : null,
      total_tokens: status === 200 ? Math.floor(next() * 200) : null,
      cost: status === 200 ? Math.floor(next() * 1000) / 1e6 : null,
      cost_currency: 'USD',
      cache_status: pick(['HIT', 'SEMANTIC_HIT', 'MISS'], next()),
      metadata: Object.keys(metadata).length > 0 ? JSON.stringify(metadata) : null,
      created_at: new Date(T0 + Math.floor(next() * SPAN)).toISOString(),
      config_id: pick(['c1', null], next()),
      prompt_id: null,
      guardrail_verdict: pick(['passed', null], next()),
      retry_count: 0,
    };
  });
}

/** Floating-point sums may differ in the last digits (another order of addition); the rest is equal. */
export function expectSameTotals(
  got: Map<string | number, Totals>,
  expected: Map<string | number, Totals>,
  what: string,
): void {
  expect([...got.keys()].sort(), what).toEqual([...expected.keys()].sort());
  for (const [key, e] of expected) {
    const { cost, latencySum, ...rest } = got.get(key)!;
    const { cost: eCost, latencySum: eLatency, ...eRest } = e;
    expect(rest, `${what} ${key}`).toEqual(eRest);
    expect(cost).toBeCloseTo(eCost, 9);
    expect(latencySum).toBeCloseTo(eLatency, 6);
  }
}
