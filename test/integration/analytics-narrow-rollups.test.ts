import { describe, expect, it } from 'vitest';
import {
  createAnalyticsReader,
  rolledUpPair,
  type GroupColumn,
  type Grouping,
  type RowFilter,
} from '../../src/admin/analytics/reader.js';
import '../../src/admin/analytics/tables.js';
import { narrowPlan } from '../../src/admin/analytics/narrow-plan.js';
import { createNarrowBackfillWorker } from '../../src/admin/analytics/narrow-backfill-worker.js';
import { setImmediate } from 'node:timers/promises';
import type { Db } from '../../src/storage/database.js';
import { sql } from 'kysely';
import { createRequestLogRepository } from '../../src/storage/repositories/request-logs.js';
import { startTestServer } from '../helpers/start-test-server.js';
import { analyticsRows, expectSameTotals, SPAN, T0 } from '../helpers/analytics-rows.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const count = async (db: Db, table: 'analytics_narrow_rollups' | 'analytics_rollups') =>
  Number(
    (
      await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Every narrow row in key order, with its histogram as hex (buckets ascending), and its float sums apart. */
async function narrowRows(db: Db) {
  const all = await db
    .selectFrom('analytics_narrow_rollups')
    .selectAll()
    .orderBy('organisation_id')
    .orderBy('metadata_key')
    .orderBy('metadata_value')
    .orderBy('dimension')
    .orderBy('value')
    .orderBy('period')
    .orderBy('period_start')
    .orderBy('workspace_id')
    .execute();
  return {
    rows: all.map(({ cost: _c, latency_sum: _l, latency_hist, ...rest }) => ({
      ...rest,
      latency_hist: Buffer.from(latency_hist).toString('hex'),
    })),
    sums: all.map((r) => [Number(r.cost), Number(r.latency_sum)]),
  };
}

/** The same narrow rows (float sums may differ in the last digits: another order of addition). */
function expectSameRows(got: Awaited<ReturnType<typeof narrowRows>>, expected: Awaited<ReturnType<typeof narrowRows>>) {
  expect(got.rows).toEqual(expected.rows);
  got.sums.forEach(([cost, latency], i) => {
    expect(cost).toBeCloseTo(expected.sums[i]![0]!, 9);
    expect(latency).toBeCloseTo(expected.sums[i]![1]!, 4);
  });
}

describe('analytics narrow rollups', () => {
  it('answer queries on one dimension (and one metadata pair) exactly as request_logs do', async () => {
    // Started at the end of the rows' span: narrow rows whole from the second full hour after.
    const started = T0 + SPAN + 30 * 60_000;
    const t = await startTestServer({
      env: { SVCGW_ANALYTICS_ROLLUP_METADATA_KEYS: 'env,team,team+env' },
      clock: { now: () => started },
    });
    const db = t.server.db;
    const mark = Math.floor(started / HOUR) + 2;
    expect(
      (await db.selectFrom('analytics_narrow_since').selectAll().execute()).map((r) => Number(r.since_hour)),
    ).toEqual([mark]);
    // The test runs the backfill itself.
    await t.server.observability.narrowBackfill.stop();
    await db.updateTable('analytics_metadata_keys').set({ since_hour: 0 }).execute();
    // As if the backfill had run: every narrow row whole (the last part below starts before it).
    await db.updateTable('analytics_narrow_since').set({ since_hour: 0 }).execute();
    const organisationId = 'org-narrow';
    const all = [
      ...analyticsRows(2500, organisationId),
      ...analyticsRows(300, 'org-other').map((r) => ({ ...r, id: `other-${r.id}` })),
    ];
    const repo = createRequestLogRepository(db);
    for (let i = 0, size = 1; i < all.length; i += size, size = ((size * 7) % 300) + 1)
      await repo.insertBatch(all.slice(i, i + size));
    // Far fewer rows than the full rollups: the point of them.
    expect(await count(db, 'analytics_narrow_rollups')).toBeGreaterThan(1000);

    const reader = createAnalyticsReader(db);
    const summed = new Map(['env', 'team', 'env+team'].map((key) => [key, 0]));
    const fromRows = (filter: RowFilter): RowFilter => ({ ...filter, rows: [{ sql: '1 = 1', params: [] }] });
    const windows = [
      [T0, T0 + SPAN],
      [T0 + 90 * 60_000 + 7, T0 + 9 * DAY + 37 * 60_000],
      [T0 + 3 * DAY + 20 * 60_000, T0 + 3 * DAY + 50 * 60_000],
    ];
    const narrow: Array<[Partial<RowFilter>, Grouping[]]> = [
      [
        {},
        columns([
          'model',
          'provider',
          'status_code',
          'config_id',
          'prompt_id',
          'credential_source',
          'guardrail_verdict',
        ]),
      ],
      [{ workspaceId: 'ws-2' }, columns(['model', 'status_code', 'guardrail_verdict'])],
      // No dimension: the totals, from every value of one dimension.
      [{}, [...TIME, ...columns(['workspace_id'])]],
      [{ workspaceId: 'ws-1' }, TIME],
      [{ model: 'm1' }, [...TIME, ...columns(['model', 'workspace_id'])]],
      [{ model: 'nothing' }, TIME],
      [{ statusCodes: [200, 429] }, [...TIME, ...columns(['status_code'])]],
      [{ workspaceId: 'ws-1', provider: 'openai' }, [...TIME, ...columns(['provider'])]],
      [{ guardrailVerdict: 'passed' }, TIME],
      [{ metadata: { env: 'prod' } }, [...TIME, ...columns(['model', 'status_code', 'workspace_id'])]],
      [{ metadata: { team: 'b' }, statusCodes: [200, 429] }, [...TIME, ...columns(['status_code'])]],
      [{ metadata: { team: 'c' }, workspaceId: 'ws-1', model: 'm2' }, [...TIME, ...columns(['model'])]],
      // Two pairs of a summed combination: as one pair.
      [{ metadata: { env: 'prod', team: 'a' } }, [...TIME, ...columns(['model', 'workspace_id'])]],
      [{ metadata: { team: 'b', env: 'dev' }, statusCodes: [200, 429] }, [...TIME, ...columns(['status_code'])]],
    ];
    // Answered by the other rollups or request_logs: a key, two dimensions.
    const other: Array<[Partial<RowFilter>, Grouping[]]> = [
      [{ apiKeyId: 'k1' }, columns(['model'])],
      [{}, columns(['api_key_id'])],
      [{ visibleKeyIds: ['k1', 'k3'] }, [...TIME, ...columns(['model'])]],
      [{ model: 'm1', provider: 'openai' }, TIME],
      [{ model: 'm1' }, columns(['provider', 'api_key_id'])],
      [{ metadata: { env: 'dev' }, model: 'm1' }, columns(['status_code'])],
      [{ metadata: { env: 'dev', team: 'b' }, model: 'm1' }, columns(['status_code'])],
    ];
    for (const [extra, groupings] of [...narrow, ...other]) {
      for (const grouping of groupings) {
        const planned = { organisationId, from: 0, to: 0, visibleKeyIds: null, ...extra };
        const plan = narrowPlan(planned, grouping, rolledUpPair(planned, summed));
        expect(plan !== null, JSON.stringify([extra, grouping])).toBe(narrow.some(([f]) => f === extra));
        for (const [from, to] of windows) {
          const filter: RowFilter = { organisationId, from: from!, to: to!, visibleKeyIds: null, ...extra };
          expectSameTotals(
            await reader.aggregate(filter, grouping, { latencies: true }),
            await reader.aggregate(fromRows(filter), grouping, { latencies: true }),
            `${JSON.stringify(extra)} ${JSON.stringify(grouping)} ${from}`,
          );
        }
      }
    }

    // The narrow rows are what answered: without the rows and the other rollups, whole hours still count.
    const whole: RowFilter = { organisationId, from: T0, to: T0 + SPAN - 1, visibleKeyIds: null, model: 'm1' };
    const expected = all.filter((r) => r.organisation_id === organisationId && r.model === 'm1').length;
    expect((await reader.aggregate(whole, { by: 'all' }, { latencies: false })).get(0)!.requests).toBe(expected);
    const stored = await narrowRows(db);
    await db.deleteFrom('request_logs').where('organisation_id', '=', organisationId).execute();
    await db.deleteFrom('analytics_metadata_rollups').execute();
    await db.deleteFrom('analytics_rollups').execute();
    expect((await reader.aggregate(whole, { by: 'all' }, { latencies: false })).get(0)!.requests).toBe(expected);
    expect(await count(db, 'analytics_rollups')).toBe(0);

    // Right after migration 0035 only the hours from its mark on are read from narrow rows; the
    // backfill job sums the older rollups into the same narrow rows, a day at a time.
    await db.deleteFrom('analytics_narrow_rollups').execute();
    await db.deleteFrom('request_logs').execute();
    await db.deleteFrom('analytics_key_rollups').execute();
    const now = new Date(started).toISOString();
    for (const id of [organisationId, 'org-other'])
      await db.insertInto('organisations').values({ id, name: id, created_at: now, last_updated_at: now }).execute();
    await db.updateTable('analytics_narrow_since').set({ since_hour: mark }).execute();
    // Written before the upgrade: rollups without narrow rows, then one batch after it.
    const before = all.filter((r) => Date.parse(r.created_at) < T0 + 30 * DAY);
    for (let i = 0, size = 1; i < before.length; i += size, size = ((size * 5) % 400) + 1)
      await repo.insertBatch(before.slice(i, i + size));
    await db.deleteFrom('analytics_narrow_rollups').execute();
    await repo.insertBatch(all.filter((r) => Date.parse(r.created_at) >= T0 + 30 * DAY));
    const backfill = t.server.observability.narrowBackfill;
    const answers = async () => {
      for (const [extra, groupings] of narrow.slice(0, 4)) {
        for (const grouping of groupings) {
          const filter: RowFilter = { organisationId, from: T0, to: T0 + SPAN, visibleKeyIds: null, ...extra };
          expectSameTotals(
            await reader.aggregate(filter, grouping, { latencies: true }),
            await reader.aggregate(fromRows(filter), grouping, { latencies: true }),
            `${JSON.stringify(extra)} ${JSON.stringify(grouping)}`,
          );
        }
      }
    };
    await answers();
    // A step cut short (here its metadata read fails) changes nothing: the mark stays.
    const partial = await narrowRows(db);
    await sql`ALTER TABLE analytics_metadata_rollups RENAME TO analytics_metadata_rollups_away`.execute(db);
    await expect(backfill.runOnce()).rejects.toThrow();
    await sql`ALTER TABLE analytics_metadata_rollups_away RENAME TO analytics_metadata_rollups`.execute(db);
    expect(
      (await db.selectFrom('analytics_narrow_since').select('since_hour').executeTakeFirstOrThrow()).since_hour,
    ).toBe(mark);
    expectSameRows(await narrowRows(db), partial);
    await answers();
    // A shutdown ends a started run after its current step instead of waiting for the rest;
    // the mark keeps the place for the next run.
    const sinceHour = async () =>
      Number((await db.selectFrom('analytics_narrow_since').select('since_hour').executeTakeFirstOrThrow()).since_hour);
    let fire: (() => void) | null = null;
    const scheduled = createNarrowBackfillWorker({
      db,
      logger: t.server.logger,
      repeat: (tick) => {
        fire = tick;
        return () => (fire = null);
      },
    });
    scheduled.start();
    fire!();
    while ((await sinceHour()) === mark) await setImmediate();
    await scheduled.stop();
    expect(fire).toBeNull(); // no further runs scheduled
    const stoppedAt = await sinceHour();
    expect(stoppedAt).toBeLessThan(mark);
    expect(stoppedAt).toBeGreaterThan(Math.floor(T0 / HOUR)); // most days still to do
    await answers();
    // The whole job: steps back to the oldest rollups, and then to 0.
    expect(await backfill.runOnce()).toBeGreaterThan(25);
    expect(
      Number((await db.selectFrom('analytics_narrow_since').select('since_hour').executeTakeFirstOrThrow()).since_hour),
    ).toBe(0);
    expect(await backfill.runOnce()).toBe(0);
    expectSameRows(await narrowRows(db), stored);
    await answers();
    // Now the narrow rows answer: without the rows and the other rollups, whole hours still count.
    await db.deleteFrom('request_logs').where('organisation_id', '=', organisationId).execute();
    await db.deleteFrom('analytics_rollups').execute();
    await db.deleteFrom('analytics_metadata_rollups').execute();
    expect((await reader.aggregate(whole, { by: 'all' }, { latencies: false })).get(0)!.requests).toBe(expected);
    // The totals too, without the key rollups.
    const { model: _model, ...everything } = whole;
    const total = all.filter((r) => r.organisation_id === organisationId).length;
    expect((await reader.aggregate(everything, { by: 'all' }, { latencies: false })).get(0)!.requests).toBe(total);
    await db.deleteFrom('analytics_key_rollups').execute();
    expect((await reader.aggregate(everything, { by: 'all' }, { latencies: false })).get(0)!.requests).toBe(total);
  }, 300_000);
});

const TIME: Grouping[] = [{ by: 'all' }, { by: 'time', interval: 'day' }, { by: 'time', interval: 'hour' }];
const columns = (names: GroupColumn[]): Grouping[] => names.map((column) => ({ by: 'column', column }));
