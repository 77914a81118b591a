import { describe, expect, it } from 'vitest';
import {
  createAnalyticsReader,
  type GroupColumn,
  type Grouping,
  type RowFilter,
} from '../../src/admin/analytics/reader.js';
import '../../src/admin/analytics/tables.js';
import { createRequestLogRepository } from '../../src/storage/repositories/request-logs.js';
import { startTestServer } from '../helpers/start-test-server.js';
import { analyticsRows, expectSameTotals, SPAN, T0 } from '../helpers/analytics-rows.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

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
    const all = analyticsRows(2500, organisationId);
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
    await expectSameAsRows(reader, organisationId, windows, filters, [
      'model',
      'status_code',
      'api_key_id',
      'guardrail_verdict',
    ]);

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

  it('answer two pairs of a listed combination exactly as request_logs do', async () => {
    const t = await startTestServer({ env: { SVCGW_ANALYTICS_ROLLUP_METADATA_KEYS: 'env,team+env' } });
    const db = t.server.db;
    const synced = await db
      .selectFrom('analytics_metadata_keys')
      .select('metadata_key')
      .orderBy('metadata_key')
      .execute();
    expect(synced.map((k) => k.metadata_key)).toEqual(['env', 'env+team']);
    await db.updateTable('analytics_metadata_keys').set({ since_hour: 0 }).execute();

    const organisationId = 'org-pairs';
    const all = analyticsRows(2500, organisationId);
    const repo = createRequestLogRepository(db);
    for (let i = 0, size = 1; i < all.length; i += size, size = ((size * 5) % 250) + 1)
      await repo.insertBatch(all.slice(i, i + size));

    // Only the rows holding both keys (with a short enough value) are summed in the combination.
    const metadataOf = (r: (typeof all)[number]) =>
      r.metadata ? (JSON.parse(r.metadata) as Record<string, string>) : {};
    const both = all.filter((r) => {
      const m = metadataOf(r);
      return m.env !== undefined && m.team !== undefined && m.env.length < 100;
    });
    const onlyOne = all.filter((r) => (metadataOf(r).env === undefined) !== (metadataOf(r).team === undefined));
    expect(both.length).toBeGreaterThan(300);
    expect(onlyOne.length).toBeGreaterThan(300);
    const summed = await db
      .selectFrom('analytics_metadata_rollups')
      .select(['metadata_value', (eb) => eb.fn.sum<number>('requests').as('n')])
      .where('metadata_key', '=', 'env+team')
      .where('period', '=', 1)
      .groupBy('metadata_value')
      .orderBy('metadata_value')
      .execute();
    const expected = new Map<string, number>();
    for (const r of both) {
      const value = JSON.stringify([metadataOf(r).env, metadataOf(r).team]);
      expected.set(value, (expected.get(value) ?? 0) + 1);
    }
    expect(summed.map((r) => [r.metadata_value, Number(r.n)])).toEqual([...expected].sort());

    const reader = createAnalyticsReader(db);
    const windows = [
      [T0, T0 + SPAN],
      [T0 + 90 * 60_000 + 7, T0 + 9 * DAY + 37 * 60_000],
    ];
    const filters: Array<Partial<RowFilter>> = [
      { metadata: { env: 'prod', team: 'a' } },
      { metadata: { team: 'b', env: 'dev' }, statusCodes: [200, 429] },
      { metadata: { env: 'prod', team: 'c' }, model: 'm1', visibleKeyIds: ['k1', 'k3'] },
      { metadata: { env: 'prod', team: 'c' }, workspaceId: 'ws-2' },
      { metadata: { env: 'prod', team: 'nobody' } },
      // Not answered by rollups: a key not listed alone, a value too long to be summed.
      { metadata: { team: 'a' } },
      { metadata: { env: 'x'.repeat(300), team: 'a' } },
    ];
    await expectSameAsRows(reader, organisationId, windows, filters, [
      'model',
      'status_code',
      'api_key_id',
      'workspace_id',
    ]);

    // The combination's rollups are what answered: without the rows, the whole hours still count.
    const whole: RowFilter = {
      organisationId,
      from: T0,
      to: T0 + SPAN - 1,
      visibleKeyIds: null,
      metadata: { team: 'a', env: 'prod' },
    };
    const prodA = (r: (typeof all)[number]) => metadataOf(r).env === 'prod' && metadataOf(r).team === 'a';
    expect((await reader.aggregate(whole, { by: 'all' }, { latencies: false })).get(0)!.requests).toBe(
      all.filter(prodA).length,
    );
    await db.deleteFrom('request_logs').where('organisation_id', '=', organisationId).execute();
    expect((await reader.aggregate(whole, { by: 'all' }, { latencies: false })).get(0)!.requests).toBe(
      all.filter(prodA).length,
    );
    // Before the combination's first whole hour request_logs answer (no rows any more), even
    // though the key env alone is summed from before.
    const since = Math.floor((T0 + 20 * DAY) / HOUR);
    await db
      .updateTable('analytics_metadata_keys')
      .set({ since_hour: since })
      .where('metadata_key', '=', 'env+team')
      .execute();
    expect((await reader.aggregate(whole, { by: 'all' }, { latencies: false })).get(0)!.requests).toBe(
      all.filter((r) => prodA(r) && Date.parse(r.created_at) >= since * HOUR).length,
    );
    // A key containing the separator is never read as a combination.
    const literal: RowFilter = { ...whole, metadata: { 'env+team': JSON.stringify(['prod', 'a']) } };
    expect((await reader.aggregate(literal, { by: 'all' }, { latencies: false })).get(0)).toBeUndefined();

    // Dropping the combination drops its rollups (metadata and narrow), and keeps the key's.
    const { syncRollupMetadataKeys } = await import('../../src/admin/analytics/metadata-keys.js');
    const keysOf = async (table: 'analytics_metadata_rollups' | 'analytics_narrow_rollups') =>
      (await db.selectFrom(table).select('metadata_key').distinct().orderBy('metadata_key').execute()).map(
        (r) => r.metadata_key,
      );
    expect(await keysOf('analytics_narrow_rollups')).toEqual(['', 'env', 'env+team']);
    await syncRollupMetadataKeys(db, ['env'], Date.now());
    expect(await keysOf('analytics_metadata_rollups')).toEqual(['env']);
    expect(await keysOf('analytics_narrow_rollups')).toEqual(['', 'env']);
  });

  it('drops the rollups of a key no longer listed, and starts it over when listed again', async () => {
    const t = await startTestServer({ env: { SVCGW_ANALYTICS_ROLLUP_METADATA_KEYS: 'env' } });
    const db = t.server.db;
    await createRequestLogRepository(db).insertBatch(analyticsRows(50, 'org-drop'));
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

/** Every filter over every window and grouping (all, day, hour and the columns) answers as request_logs do. */
async function expectSameAsRows(
  reader: ReturnType<typeof createAnalyticsReader>,
  organisationId: string,
  windows: number[][],
  filters: Array<Partial<RowFilter>>,
  columns: GroupColumn[],
): Promise<void> {
  const fromRows = (filter: RowFilter): RowFilter => ({ ...filter, rows: [{ sql: '1 = 1', params: [] }] });
  const groupings: Grouping[] = [
    { by: 'all' },
    { by: 'time', interval: 'day' },
    { by: 'time', interval: 'hour' },
    ...columns.map((column): Grouping => ({ by: 'column', column })),
  ];
  for (const [from, to] of windows) {
    for (const extra of filters) {
      for (const grouping of groupings) {
        const filter: RowFilter = { organisationId, from: from!, to: to!, visibleKeyIds: null, ...extra };
        expectSameTotals(
          await reader.aggregate(filter, grouping, { latencies: true }),
          await reader.aggregate(fromRows(filter), grouping, { latencies: true }),
          `${JSON.stringify(extra).slice(0, 80)} ${JSON.stringify(grouping)} ${from}`,
        );
      }
    }
  }
}
