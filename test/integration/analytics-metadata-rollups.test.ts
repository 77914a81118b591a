import { describe, expect, it } from 'vitest';
import {
  createAnalyticsReader,
  type GroupColumn,
  type Grouping,
  type RowFilter,
} from '../../src/admin/analytics/reader.js';
import '../../src/admin/analytics/tables.js';
import type { Totals } from '../../src/admin/analytics/totals.js';
import { createRequestLogRepository, type RequestLogInsert } from '../../src/storage/repositories/request-logs.js';
import { startTestServer } from '../helpers/start-test-server.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A Sunday noon; the rows span 40 days: hours, days, weeks and a four-week period. */
const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const SPAN = 40 * DAY;

function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(items: readonly T[], r: number): T => items[Math.floor(r * items.length)]!;

function rows(n: number, organisationId: string): RequestLogInsert[] {
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
function expectSame(got: Map<string | number, Totals>, expected: Map<string | number, Totals>, what: string): void {
  expect([...got.keys()].sort(), what).toEqual([...expected.keys()].sort());
  for (const [key, e] of expected) {
    const { cost, latencySum, ...rest } = got.get(key)!;
    const { cost: eCost, latencySum: eLatency, ...eRest } = e;
    expect(rest, `${what} ${key}`).toEqual(eRest);
    expect(cost).toBeCloseTo(eCost, 9);
    expect(latencySum).toBeCloseTo(eLatency, 6);
  }
}

describe('analytics metadata rollups', () => {
  it('answer a metadata filter exactly as request_logs do, with any other filter and grouping', async () => {
    const t = await startTestServer({ env: { SVCGW_ANALYTICS_ROLLUP_METADATA_KEYS: 'env, team,env' } });
    const db = t.server.db;
    // The setting was synced at start: whole from the second hour after now.
    const synced = await db.selectFrom('analytics_metadata_keys').selectAll().orderBy('metadata_key').execute();
    const hourNow = Math.floor(Date.now() / HOUR);
    expect(synced.map((k) => [k.metadata_key, Number(k.since_hour) - hourNow])).toEqual([
      ['env', 2],
      ['team', 2],
    ]);
    // The rows below are older: say the keys were summed from before them.
    await db.updateTable('analytics_metadata_keys').set({ since_hour: 0 }).execute();

    const organisationId = 'org-meta';
    const all = rows(2500, organisationId);
    const repo = createRequestLogRepository(db);
    for (let i = 0, size = 1; i < all.length; i += size, size = ((size * 7) % 300) + 1)
      await repo.insertBatch(all.slice(i, i + size));
    expect(
      Number(
        (
          await db
            .selectFrom('analytics_metadata_rollups')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBeGreaterThan(1000);

    const reader = createAnalyticsReader(db);
    // The same filter with a per-request condition that holds for every row: read from request_logs.
    const fromRows = (filter: RowFilter): RowFilter => ({ ...filter, rows: [{ sql: '1 = 1', params: [] }] });
    const windows = [
      [T0, T0 + SPAN],
      [T0 + 90 * 60_000 + 7, T0 + 9 * DAY + 37 * 60_000],
      [T0 + 3 * DAY + 20 * 60_000, T0 + 3 * DAY + 50 * 60_000],
    ];
    const filters: Array<Partial<RowFilter>> = [
      { metadata: { env: 'prod' } },
      { metadata: { team: 'b' }, statusCodes: [200, 429] },
      { metadata: { env: 'dev' }, model: 'm1', visibleKeyIds: ['k1', 'k3'] },
      { metadata: { env: 'nobody' } },
      // Not answered by rollups: two pairs, and a value too long to be summed.
      { metadata: { env: 'prod', team: 'a' } },
      { metadata: { env: 'x'.repeat(300) } },
    ];
    const groupings: Grouping[] = [
      { by: 'all' },
      { by: 'time', interval: 'day' },
      { by: 'time', interval: 'hour' },
      ...(['model', 'status_code', 'api_key_id', 'guardrail_verdict'] as GroupColumn[]).map((column): Grouping => ({
        by: 'column',
        column,
      })),
    ];
    for (const [from, to] of windows) {
      for (const extra of filters) {
        for (const grouping of groupings) {
          const filter: RowFilter = { organisationId, from: from!, to: to!, visibleKeyIds: null, ...extra };
          expectSame(
            await reader.aggregate(filter, grouping, { latencies: true }),
            await reader.aggregate(fromRows(filter), grouping, { latencies: true }),
            `${JSON.stringify(extra).slice(0, 80)} ${JSON.stringify(grouping)} ${from}`,
          );
        }
      }
    }

    // The rollups are what answered: without the rows, the whole hours still count.
    const whole: RowFilter = {
      organisationId,
      from: T0,
      to: T0 + SPAN - 1,
      visibleKeyIds: null,
      metadata: { env: 'prod' },
    };
    const before = (await reader.aggregate(whole, { by: 'all' }, { latencies: false })).get(0)!.requests;
    expect(before).toBeGreaterThan(100);
    await db.deleteFrom('request_logs').where('organisation_id', '=', organisationId).execute();
    expect((await reader.aggregate(whole, { by: 'all' }, { latencies: false })).get(0)!.requests).toBe(before);

    // Before a key's first whole hour, request_logs answer (here: no rows any more).
    const since = Math.floor((T0 + 20 * DAY) / HOUR);
    await db.updateTable('analytics_metadata_keys').set({ since_hour: since }).execute();
    const later = all.filter(
      (r) => Date.parse(r.created_at) >= since * HOUR && r.metadata && JSON.parse(r.metadata).env === 'prod',
    );
    expect((await reader.aggregate(whole, { by: 'all' }, { latencies: false })).get(0)!.requests).toBe(later.length);
  });

  it('drops the rollups of a key no longer listed, and starts it over when listed again', async () => {
    const t = await startTestServer({ env: { SVCGW_ANALYTICS_ROLLUP_METADATA_KEYS: 'env' } });
    const db = t.server.db;
    await createRequestLogRepository(db).insertBatch(rows(50, 'org-drop'));
    expect((await db.selectFrom('analytics_metadata_rollups').select('metadata_key').execute()).length).toBeGreaterThan(
      0,
    );
    const { syncRollupMetadataKeys } = await import('../../src/admin/analytics/metadata-keys.js');
    await syncRollupMetadataKeys(db, ['team'], Date.now());
    expect(await db.selectFrom('analytics_metadata_keys').select('metadata_key').execute()).toEqual([
      { metadata_key: 'team' },
    ]);
    expect(await db.selectFrom('analytics_metadata_rollups').select('metadata_key').distinct().execute()).toEqual([]);
  });
});
