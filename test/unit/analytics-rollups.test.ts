import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createAnalyticsReader,
  planWindow,
  type GroupColumn,
  type RowFilter,
} from '../../src/admin/analytics/reader.js';
import '../../src/admin/analytics/tables.js';
import { percentile } from '../../src/admin/analytics/totals.js';
import { migrateToLatest, openSqlite, rawSqlite, type Db } from '../../src/storage/database.js';
import { migrationProvider } from '../../src/storage/migrations/index.js';
import {
  addHistogram,
  bucketValue,
  createRequestLogRepository,
  encodeHistogram,
  LATENCY_BUCKETS,
  LATENCY_RELATIVE_ERROR,
  latencyBucket,
  mergeHistograms,
  type RequestLogInsert,
} from '../../src/storage/repositories/request-logs.js';
import { pick, random } from '../helpers/analytics-rows.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A Sunday noon: windows below cross weeks (Monday) and days. */
const T0 = Date.parse('2026-03-01T12:00:00.000Z');
/** Rows over 70 days: whole four-week periods too. */
const SPAN = 70 * DAY;

function rows(n: number, seed: number): RequestLogInsert[] {
  const next = random(seed);
  return Array.from({ length: n }, (_, i) => {
    const status = pick([200, 200, 200, 429, 500], next());
    const tokens = status === 200 && next() < 0.9;
    return {
      id: `log-${seed}-${i}`,
      trace_id: `t-${i}`,
      request_id: `r-${i}`,
      organisation_id: pick(['org-a', 'org-b'], next()),
      workspace_id: pick(['ws-1', 'ws-2'], next()),
      api_key_id: pick(['k1', 'k2', 'k3'], next()),
      provider: pick(['openai', 'anthropic', null], next()),
      credential_source: pick(['direct', 'custom_host', null], next()),
      model: pick(['m1', 'm2', null], next()),
      endpoint_type: 'chatComplete',
      method: 'POST',
      path: '/v1/chat/completions',
      status_code: status,
      is_success: status === 200 ? 1 : 0,
      is_stream: 0,
      latency_ms: 0.005 + next() * 3000,
      prompt_tokens: tokens ? Math.floor(next() * 100) : null,
      completion_tokens: tokens ? Math.floor(next() * 100) : null,
      total_tokens: tokens ? Math.floor(next() * 200) : null,
      cost: tokens ? next() / 1000 : null,
      cost_currency: 'USD',
      cache_status: pick(['HIT', 'SEMANTIC_HIT', 'MISS', 'DISABLED'], next()),
      metadata: next() < 0.5 ? JSON.stringify({ env: pick(['prod', 'dev'], next()) }) : null,
      created_at: new Date(T0 + Math.floor(next() * SPAN)).toISOString(),
      config_id: pick(['c1', null], next()),
      prompt_id: pick(['p1', null, null], next()),
      retry_count: 0,
    };
  });
}

async function database(options: { migrateTo?: string } = {}): Promise<Db> {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-rollups-'));
  const db = openSqlite(dir);
  onTestFinished(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  if (options.migrateTo) {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(options.migrateTo);
    if (error) throw error instanceof Error ? error : new Error('migration failed', { cause: error });
  } else {
    await migrateToLatest(db);
  }
  return db;
}

/** The figures by hand: every row of `all` in the window that passes the filter, per group. */
function byHand(all: RequestLogInsert[], filter: RowFilter, column: GroupColumn) {
  const groups = new Map<string | number, RequestLogInsert[]>();
  for (const r of all) {
    const at = Date.parse(r.created_at);
    if (r.organisation_id !== filter.organisationId || at < filter.from || at > filter.to) continue;
    if (filter.model !== undefined && r.model !== filter.model) continue;
    if (filter.visibleKeyIds && !filter.visibleKeyIds.includes(r.api_key_id)) continue;
    if (
      filter.metadata &&
      !Object.entries(filter.metadata).every(([k, v]) => r.metadata && JSON.parse(r.metadata)[k] === v)
    )
      continue;
    const key = column === 'status_code' ? r.status_code : (r[column] ?? '');
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return groups;
}

describe('analytics rollups', () => {
  it('plans a window as parts of hours at the edges and whole weeks, days and hours between', () => {
    const from = Date.parse('2026-03-01T10:30:00.000Z'); // a Sunday
    const to = Date.parse('2026-03-10T05:15:00.000Z');
    const plan = planWindow(from, to, 672);
    expect(plan.raw).toEqual([
      { from, to: Date.parse('2026-03-01T10:59:59.999Z') },
      { from: Date.parse('2026-03-10T05:00:00.000Z'), to },
    ]);
    const h = (iso: string) => Date.parse(iso) / HOUR;
    expect(plan.rollups).toEqual([
      { period: 1, start: h('2026-03-01T11:00:00Z'), end: h('2026-03-02T00:00:00Z') },
      { period: 168, start: h('2026-03-02T00:00:00Z'), end: h('2026-03-09T00:00:00Z') },
      { period: 24, start: h('2026-03-09T00:00:00Z'), end: h('2026-03-10T00:00:00Z') },
      { period: 1, start: h('2026-03-10T00:00:00Z'), end: h('2026-03-10T05:00:00Z') },
    ]);
    // 2026-01-19 starts a four-week period (counted from Monday 1970-01-05).
    expect(planWindow(Date.parse('2026-01-19T00:00:00Z'), Date.parse('2026-02-16T00:00:00Z') - 1, 672).rollups).toEqual(
      [{ period: 672, start: h('2026-01-19T00:00:00Z'), end: h('2026-02-16T00:00:00Z') }],
    );
    // Graphs by day never read weeks; a window within one hour is all request_logs.
    expect(planWindow(from, to, 24).rollups.every((r) => r.period <= 24)).toBe(true);
    expect(planWindow(from, from + 60_000, 672)).toEqual({ raw: [{ from, to: from + 60_000 }], rollups: [] });
  });

  it('places every latency within 2.44 % of its bucket value', () => {
    for (let ms = 0.011; ms < 1e8; ms *= 1.013)
      expect(Math.abs(bucketValue(latencyBucket(ms)) - ms) / ms).toBeLessThanOrEqual(LATENCY_RELATIVE_ERROR + 1e-12);
  });

  it('merges two stored latency histograms into the stored form of their sum, whatever their buckets', () => {
    const draw = random(19);
    const denseSum = (a: Buffer | null, b: Buffer | null) => {
      const dense = new Float64Array(LATENCY_BUCKETS);
      addHistogram(dense, a);
      addHistogram(dense, b);
      return encodeHistogram(dense);
    };
    const stored = (buckets: number) => {
      const dense = new Float64Array(LATENCY_BUCKETS);
      for (let i = 0; i < buckets; i++) dense[Math.floor(draw() * LATENCY_BUCKETS)]! += 1 + Math.floor(draw() * 1000);
      return encodeHistogram(dense);
    };
    for (let round = 0; round < 200; round++) {
      const a = round % 10 === 0 ? null : stored(Math.floor(draw() * 40));
      const b = round % 7 === 0 ? null : stored(Math.floor(draw() * 40));
      expect(mergeHistograms(a, b)).toEqual(denseSum(a, b));
    }
    // Not the stored form: buckets out of order, repeated or past the last, a count of zero, a partial pair.
    const pairs = (...entries: Array<[number, number]>) => {
      const out = Buffer.alloc(entries.length * 6);
      entries.forEach(([bucket, count], i) => {
        out.writeUInt16LE(bucket, i * 6);
        out.writeUInt32LE(count, i * 6 + 2);
      });
      return out;
    };
    const odd = [
      pairs([9, 2], [3, 5]),
      pairs([3, 1], [3, 4]),
      pairs([2, 1], [LATENCY_BUCKETS + 5, 7]),
      pairs([4, 0], [6, 3]),
      Buffer.concat([pairs([1, 1]), Buffer.from([7, 0])]),
    ];
    for (const a of odd)
      for (const b of [null, pairs([3, 2], [8, 1])]) {
        expect(mergeHistograms(a, b)).toEqual(denseSum(a, b));
        expect(mergeHistograms(b, a)).toEqual(denseSum(b, a));
      }
    expect(mergeHistograms(pairs([9, 2], [3, 5]), null)).toEqual(pairs([3, 5], [9, 2]));
  });

  it('answers exactly as the rows do, written in batches of any size, over any window, with any filter', async () => {
    const db = await database();
    const all = rows(3000, 7);
    const repo = createRequestLogRepository(db);
    for (let i = 0, size = 1; i < all.length; i += size, size = ((size * 7) % 500) + 1)
      await repo.insertBatch(all.slice(i, i + size));
    const reader = createAnalyticsReader(db);
    const windows = [
      [T0, T0 + SPAN],
      [T0 + 90 * 60_000 + 7, T0 + 9 * DAY + 37 * 60_000],
      [T0 + 3 * DAY, T0 + 3 * DAY + HOUR - 1],
      [T0 + 25 * 60_000, T0 + 50 * 60_000],
    ];
    const filters: Array<Partial<RowFilter>> = [
      {},
      { model: 'm1' },
      { visibleKeyIds: ['k1', 'k3'] },
      { metadata: { env: 'prod' } },
    ];
    for (const [from, to] of windows) {
      for (const extra of filters) {
        for (const column of [
          'provider',
          'model',
          'status_code',
          'api_key_id',
          'config_id',
          'workspace_id',
          'credential_source',
          'prompt_id',
        ] as GroupColumn[]) {
          const filter: RowFilter = { organisationId: 'org-a', from: from!, to: to!, visibleKeyIds: null, ...extra };
          const got = await reader.aggregate(filter, { by: 'column', column }, { latencies: true });
          const expected = byHand(all, filter, column);
          expect([...got.keys()].sort(), `${column} ${JSON.stringify(extra)}`).toEqual([...expected.keys()].sort());
          for (const [key, group] of expected) {
            const t = got.get(key)!;
            const known = (f: (r: RequestLogInsert) => number | null | undefined) =>
              group.map(f).filter((v): v is number => typeof v === 'number');
            const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
            expect(t).toMatchObject({
              requests: group.length,
              successes: group.filter((r) => r.is_success).length,
              cacheHits: group.filter((r) => r.cache_status.endsWith('HIT')).length,
              semanticHits: group.filter((r) => r.cache_status === 'SEMANTIC_HIT').length,
              totalTokens: sum(known((r) => r.total_tokens)),
              tokenRows: known((r) => r.total_tokens).length,
              promptRows: known((r) => r.prompt_tokens).length,
              completionTokens: sum(known((r) => r.completion_tokens)),
              latencyMin: Math.min(...group.map((r) => r.latency_ms)),
              latencyMax: Math.max(...group.map((r) => r.latency_ms)),
              first: Math.min(...group.map((r) => Date.parse(r.created_at))),
              last: Math.max(...group.map((r) => Date.parse(r.created_at))),
            });
            expect(t.cost).toBeCloseTo(sum(known((r) => r.cost)), 12);
            expect(t.latencySum).toBeCloseTo(sum(group.map((r) => r.latency_ms)), 6);
            const sorted = group.map((r) => r.latency_ms).sort((a, b) => a - b);
            for (const p of [0.5, 0.9, 0.95, 0.99]) {
              const exact = sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!;
              expect(Math.abs(percentile(t, p)! - exact)).toBeLessThanOrEqual(exact * LATENCY_RELATIVE_ERROR + 0.001);
            }
          }
        }
      }
    }
  });

  it('sums a batch of rows in time order, most with the keys of the row before, as it sums them one by one', async () => {
    // Each row repeats the one before (the common case) or differs from it in one key column.
    const next = random(23);
    const choices: Record<string, ReadonlyArray<string | number | null>> = {
      organisation_id: ['org-a', 'org-b'],
      workspace_id: ['ws-1', 'ws-2'],
      api_key_id: ['k1', 'k2'],
      provider: ['openai', 'anthropic', null],
      credential_source: ['direct', null],
      model: ['m1', 'm2', null],
      config_id: ['c1', null],
      prompt_id: ['p1', null],
      status_code: [200, 429],
      guardrail_verdict: ['passed', 'failed', null],
    };
    const columns = Object.keys(choices);
    const all: RequestLogInsert[] = [];
    let previous = rows(1, 29)[0]!;
    for (let i = 0; i < 400; i++) {
      const row: RequestLogInsert = {
        ...previous,
        id: `run-${i}`,
        latency_ms: 0.5 + next() * 900,
        // 400 rows over 80 minutes, in order: two hours, each with many rows in a row.
        created_at: new Date(T0 + i * 12_000).toISOString(),
      };
      if (next() < 0.4) {
        const column = pick(columns, next());
        (row as Record<string, unknown>)[column] = pick(choices[column]!, next());
      }
      all.push(row);
      previous = row;
    }
    const together = await database();
    await createRequestLogRepository(together).insertBatch(all);
    const oneByOne = await database();
    const repo = createRequestLogRepository(oneByOne);
    for (const row of all) await repo.insertBatch([row]);
    for (const table of ['analytics_rollups', 'analytics_key_rollups', 'analytics_narrow_rollups'] as const) {
      const read = (db: Db) =>
        (rawSqlite(db)!.prepare(`SELECT * FROM ${table}`).all() as Array<Record<string, unknown>>)
          .map(({ cost, latency_sum, ...key }) => ({ key: JSON.stringify(key), cost, latency_sum }))
          .sort((a, b) => a.key.localeCompare(b.key));
      const [a, b] = [read(together), read(oneByOne)];
      expect(a.length).toBeGreaterThan(10);
      expect(a.map((r) => r.key)).toEqual(b.map((r) => r.key));
      a.forEach((row, i) => {
        expect(row.cost).toBeCloseTo(b[i]!.cost as number, 12);
        expect(row.latency_sum).toBeCloseTo(b[i]!.latency_sum as number, 6);
      });
    }
  });

  it('fills the rollups of logs written before the migration exactly as insertBatch does', async () => {
    const all = rows(1500, 11);
    const incremental = await database();
    await createRequestLogRepository(incremental).insertBatch(all);
    const upgraded = await database({ migrateTo: '0012-observability' });
    const sqlite = rawSqlite(upgraded)!;
    const columns = Object.keys(all[0]!);
    const insert = sqlite.prepare(
      `INSERT INTO request_logs (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`,
    );
    sqlite.transaction(() => all.forEach((r) => insert.run(r)))();
    await migrateToLatest(upgraded);
    for (const table of ['analytics_rollups', 'analytics_key_rollups'] as const) {
      const read = (db: Db) =>
        rawSqlite(db)!
          .prepare(
            `SELECT * FROM ${table} ORDER BY 1, 2, 3, 4, 5${table === 'analytics_rollups' ? ', 6, 7, 8, 9, 10, 11' : ''}`,
          )
          .all() as Array<Record<string, unknown>>;
      const [a, b] = [read(incremental), read(upgraded)];
      expect(b.length).toBe(a.length);
      a.forEach((row, i) => {
        const { cost, latency_sum, ...rest } = row;
        const { cost: cost2, latency_sum: latency2, ...rest2 } = b[i]!;
        expect(rest2).toEqual(rest);
        expect(cost2).toBeCloseTo(cost as number, 12);
        expect(latency2).toBeCloseTo(latency_sum as number, 6);
      });
    }
  });
});
