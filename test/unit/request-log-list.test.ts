import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { migrateToLatest, openSqlite, type Db } from '../../src/storage/database.js';
import {
  createRequestLogRepository,
  LOG_TOTAL_BOUND,
  type RequestLogInsert,
} from '../../src/storage/repositories/request-logs.js';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');

async function database(): Promise<Db> {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-log-list-'));
  const db = openSqlite(dir);
  onTestFinished(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  await migrateToLatest(db);
  return db;
}

/** Row `i` is made `i` seconds after T0, unless `at` says otherwise. */
const log = (i: number, fields: Partial<RequestLogInsert> = {}): RequestLogInsert => ({
  id: `log-${i}`,
  trace_id: `t-${i}`,
  request_id: `r-${i}`,
  organisation_id: 'org-a',
  workspace_id: 'ws-1',
  api_key_id: i % 2 === 0 ? 'k-even' : 'k-odd',
  provider: 'openai',
  credential_source: 'direct',
  model: 'm1',
  endpoint_type: 'chatComplete',
  method: 'POST',
  path: '/v1/chat/completions',
  status_code: 200,
  is_success: 1,
  is_stream: 0,
  latency_ms: 10,
  cost_currency: 'USD',
  cache_status: 'DISABLED',
  created_at: new Date(T0 + i * 1000).toISOString(),
  retry_count: 0,
  ...fields,
});

const page = { organisationId: 'org-a', limit: 50, offset: 0 };

describe('request log listing', () => {
  it('counts at most the bound and says when more rows match', async () => {
    const repo = createRequestLogRepository(await database());
    const all = Array.from({ length: LOG_TOTAL_BOUND + 20 }, (_, i) => log(i));
    for (let at = 0; at < all.length; at += 1000) await repo.insertBatch(all.slice(at, at + 1000));

    const whole = await repo.list(page);
    expect(whole.total).toBe(LOG_TOTAL_BOUND);
    expect(whole.totalIsLowerBound).toBe(true);
    expect(whole.rows.map((r) => r.id).slice(0, 2)).toEqual([`log-${all.length - 1}`, `log-${all.length - 2}`]);

    // Under the bound the total is exact.
    const odd = await repo.list({ ...page, apiKeyId: 'k-odd' });
    expect(odd).toMatchObject({ total: (LOG_TOTAL_BOUND + 20) / 2, totalIsLowerBound: false });

    // The last page under the bound counts one row further: a client paging until `total` goes on.
    const last = await repo.list({ ...page, offset: LOG_TOTAL_BOUND - 50, limit: 50 });
    expect(last).toMatchObject({ total: LOG_TOTAL_BOUND + 1, totalIsLowerBound: true });

    // A page past the bound is still counted up to its end, so that the client can page on.
    const far = await repo.list({ ...page, offset: LOG_TOTAL_BOUND, limit: 50 });
    expect(far).toMatchObject({ total: LOG_TOTAL_BOUND + 20, totalIsLowerBound: false });
    expect(far.rows).toHaveLength(20);
  });

  it('lists newest first by time, whatever the order the rows were written in', async () => {
    const repo = createRequestLogRepository(await database());
    // A batch written late may hold older requests (another instance's writer, a retried batch).
    await repo.insertBatch([log(5), log(6)]);
    await repo.insertBatch([log(1), log(9)]);
    await repo.insertBatch([log(7, { id: 'same-second-first', created_at: log(7).created_at }), log(7)]);
    const { rows, total, totalIsLowerBound } = await repo.list(page);
    expect(rows.map((r) => r.id)).toEqual(['log-9', 'log-7', 'same-second-first', 'log-6', 'log-5', 'log-1']);
    expect({ total, totalIsLowerBound }).toEqual({ total: 6, totalIsLowerBound: false });
  });
});
