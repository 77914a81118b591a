import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  buildMetadataRollupsFromLogsFast,
  buildNarrowRollupsFromLogsFast,
  buildRollupsFromLogsFast,
  insertGeneratedRows,
  withoutIndexes,
} from '../../scripts/bench/postgres-rows.js';
import { migrateToLatest, openDatabase, type Db } from '../../src/storage/database.js';
import {
  COLUMNS,
  createRequestLogRepository,
  type RequestLogInsert,
} from '../../src/storage/repositories/request-logs.js';
import '../../src/admin/analytics/tables.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { postgresAvailable } from '../helpers/services.js';

const hasPostgres = await postgresAvailable();
const DAY_MS = 86_400_000;

type Row = Record<string, unknown>;

/** Every rollup row of a table, in key order. */
async function rollups(
  db: Db,
  table: 'analytics_rollups' | 'analytics_key_rollups' | 'analytics_metadata_rollups' | 'analytics_narrow_rollups',
): Promise<Row[]> {
  const keys =
    table === 'analytics_rollups'
      ? 'organisation_id, period, period_start, workspace_id, api_key_id, provider, credential_source, model, config_id, prompt_id, status_code, guardrail_verdict'
      : table === 'analytics_metadata_rollups'
        ? 'organisation_id, metadata_key, metadata_value, period, period_start, workspace_id, api_key_id, provider, credential_source, model, config_id, prompt_id, status_code, guardrail_verdict'
        : table === 'analytics_narrow_rollups'
          ? 'organisation_id, metadata_key, metadata_value, dimension, value, period, period_start, workspace_id'
          : 'organisation_id, period, period_start, workspace_id, api_key_id';
  const { rows } = await sql<Row>`select * from ${sql.table(table)} order by ${sql.raw(keys)}`.execute(db);
  return rows;
}

/** Floating-point sums may differ in the last digits (another order of addition); everything else is equal. */
function expectSameRollups(built: Row[], written: Row[]): void {
  expect(built.length).toBe(written.length);
  const floats = ['cost', 'latency_sum'];
  const strip = (row: Row) => Object.fromEntries(Object.entries(row).filter(([k]) => !floats.includes(k)));
  for (let i = 0; i < built.length; i++) {
    expect(strip(built[i]!)).toEqual(strip(written[i]!));
    for (const column of floats) {
      const [a, b] = [built[i]![column] as number, written[i]![column] as number];
      expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(b)));
    }
  }
}

describe.skipIf(!hasPostgres)('analytics rollups built in SQL (the PostgreSQL benchmark)', () => {
  it('equal the rollups the gateway writes through the repository for the same rows', async () => {
    const db = openDatabase({ data_dir: '/nonexistent', database_url: await createTestDatabase() });
    onTestFinished(() => db.destroy());
    await migrateToLatest(db);
    const set = {
      organisationId: randomUUID(),
      workspaces: Array.from({ length: 5 }, () => randomUUID()),
      keys: Array.from({ length: 40 }, () => randomUUID()),
      configs: Array.from({ length: 5 }, () => randomUUID()),
      rows: 4000,
      now: Date.parse('2026-11-24T10:00:00.000Z'),
      // Over five weeks: hours with several rows of one key, and days, weeks and four weeks across boundaries.
      spanMs: 35 * DAY_MS,
    };
    await withoutIndexes(db, 'request_logs', () => insertGeneratedRows(db, set, 0, 1500));
    await insertGeneratedRows(db, set, 1500, set.rows);
    await buildRollupsFromLogsFast(db);
    await buildMetadataRollupsFromLogsFast(db, ['env', 'team', 'env+team']);
    await buildNarrowRollupsFromLogsFast(db, ['env', 'team', 'env+team']);
    const built = {
      full: await rollups(db, 'analytics_rollups'),
      byKey: await rollups(db, 'analytics_key_rollups'),
      byPair: await rollups(db, 'analytics_metadata_rollups'),
      narrow: await rollups(db, 'analytics_narrow_rollups'),
    };
    expect(built.narrow.some((row) => row.metadata_key === 'team')).toBe(true);
    expect(built.byPair.some((row) => row.metadata_key === 'env+team')).toBe(true);
    expect(built.full.length).toBeGreaterThan(1000);
    // Some rollup rows sum several requests with several latency buckets.
    expect(built.byKey.some((row) => Number(row.requests) > 100)).toBe(true);

    // The same rows again, through the gateway's write path: rows and rollups in batches of 500.
    const { rows } =
      await sql<RequestLogInsert>`select ${sql.raw(COLUMNS.join(', '))} from request_logs order by seq`.execute(db);
    expect(rows).toHaveLength(set.rows);
    await sql`truncate request_logs, analytics_rollups, analytics_key_rollups, analytics_metadata_rollups, analytics_narrow_rollups`.execute(
      db,
    );
    await db.deleteFrom('analytics_metadata_keys').execute();
    await db
      .insertInto('analytics_metadata_keys')
      .values([
        { metadata_key: 'env', since_hour: 0 },
        { metadata_key: 'team', since_hour: 0 },
        { metadata_key: 'env+team', since_hour: 0 },
      ])
      .execute();
    const repo = createRequestLogRepository(db);
    for (let at = 0; at < rows.length; at += 500) await repo.insertBatch(rows.slice(at, at + 500));

    expectSameRollups(built.full, await rollups(db, 'analytics_rollups'));
    expectSameRollups(built.byKey, await rollups(db, 'analytics_key_rollups'));
    expectSameRollups(built.byPair, await rollups(db, 'analytics_metadata_rollups'));
    expectSameRollups(built.narrow, await rollups(db, 'analytics_narrow_rollups'));
  });

  it('draws the benchmark’s distribution', async () => {
    const db = openDatabase({ data_dir: '/nonexistent', database_url: await createTestDatabase() });
    onTestFinished(() => db.destroy());
    await migrateToLatest(db);
    const now = Date.parse('2026-11-24T10:00:00.000Z');
    const set = {
      organisationId: 'org',
      workspaces: ['w0', 'w1', 'w2', 'w3', 'w4'],
      keys: Array.from({ length: 40 }, (_, i) => `k${i}`),
      configs: ['c0', 'c1', 'c2', 'c3', 'c4'],
      rows: 20_000,
      now,
      spanMs: 89 * DAY_MS,
    };
    await insertGeneratedRows(db, set, 0, set.rows);
    const { rows } = await sql<Record<string, number | string>>`
      select count(*) filter (where status_code = 200)::float8 / count(*) as ok,
        count(*) filter (where model = 'gpt-4o-mini')::float8 / count(*) as first_model,
        count(*) filter (where metadata is not null)::float8 / count(*) as with_metadata,
        count(*) filter (where cache_status in ('HIT', 'SEMANTIC_HIT'))::float8 / count(*) as hits,
        count(*) filter (where config_id is not null)::float8 / count(*) as with_config,
        count(*) filter (where api_key_id = 'k5' and workspace_id <> 'w0')::int as misplaced,
        count(*) filter (where status_code <> 200 and total_tokens is not null)::int as tokens_on_errors,
        min(created_at) as first, max(created_at) as last
      from request_logs`.execute(db);
    const r = rows[0]!;
    expect(r.ok).toBeCloseTo(0.93, 1);
    // Skewed as `skewed` is: the first of 8 models for r² < 1/8, a third of the rows.
    expect(r.first_model).toBeCloseTo(Math.sqrt(1 / 8), 1);
    expect(r.with_metadata).toBeCloseTo(0.5, 1);
    expect(r.hits).toBeCloseTo(0.1, 1);
    expect(r.with_config).toBeCloseTo(0.3, 1);
    expect(r.misplaced).toBe(0);
    expect(r.tokens_on_errors).toBe(0);
    expect(r.first).toBe(new Date(now - 89 * DAY_MS).toISOString());
    expect(r.last! <= new Date(now).toISOString()).toBe(true);
  });
});
