import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Observability } from '../../src/admin/observability/index.js';
import { PURGE_BATCH_ROWS } from '../../src/admin/observability/retention/retention-worker.js';
import { createManualClock } from '../../src/lib/clock.js';
import { newId, newTimeOrderedId } from '../../src/lib/ids.js';
import { createRequestLogRepository, type RequestLogInsert } from '../../src/storage/repositories/request-logs.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const DAY = 24 * 60 * 60 * 1000;

async function seeder(t: TestServer) {
  const db = t.server.db;
  const org = await db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
  const ws = await db.selectFrom('workspaces').select('id').executeTakeFirstOrThrow();
  const key = await db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow();
  const repo = createRequestLogRepository(db);
  return {
    ids: { organisationId: org.id, workspaceId: ws.id },
    async logs(count: number, at: string, overrides: Partial<RequestLogInsert> = {}) {
      const rows: RequestLogInsert[] = Array.from({ length: count }, (_, i) => ({
        id: newTimeOrderedId(), trace_id: `t-${at}-${i}`, request_id: newTimeOrderedId(), organisation_id: org.id, workspace_id: ws.id, api_key_id: key.id,
        provider: 'openai', credential_source: 'direct', model: 'gpt-4o-mini', endpoint_type: 'chatComplete', method: 'POST', path: '/v1/chat/completions',
        status_code: 200, is_success: 1, is_stream: 0, latency_ms: 100, prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cost: 0.002,
        cost_currency: 'USD', cache_status: 'MISS', retry_count: 0, created_at: new Date(Date.parse(at) + i).toISOString(), ...overrides,
      }));
      await repo.insertBatch(rows);
    },
    async feedback(traceId: string, at: string) {
      await db.insertInto('feedback').values({ id: newId(), organisation_id: org.id, workspace_id: ws.id, trace_id: traceId, value: 1, weight: 1, metadata: null, api_key_id: key.id, created_at: at, last_updated_at: at }).execute();
    },
    count: async (table: 'request_logs' | 'feedback') => Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n),
    daily: () => db.selectFrom('request_log_daily').selectAll().orderBy('day').orderBy('provider').orderBy('status_class').execute(),
  };
}

describe('retention', () => {
  it('rolls logs up per day, then deletes logs past LOG_RETENTION_DISPLAY and daily rows past METRICS_RETENTION_DISPLAY, nothing newer', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T12:00:00.000Z'));
    const t = await startTestServer({ clock, env: { LOG_RETENTION_DISPLAY: '60', METRICS_RETENTION_DISPLAY: '365' } });
    const retention = (t.server.observability as Observability).retention;
    const s = await seeder(t);
    await s.logs(PURGE_BATCH_ROWS * 2 + 500, '2026-01-15T08:00:00.000Z'); // several delete batches
    await s.logs(20, '2026-01-15T09:00:00.000Z', { provider: 'anthropic', model: 'claude-3-5-haiku', status_code: 502, is_success: 0, cost: null, total_tokens: null, prompt_tokens: null, completion_tokens: null, cache_status: 'HIT' });
    await s.logs(3, '2025-05-01T10:00:00.000Z'); // past both retentions
    await s.logs(4, '2026-03-31T23:00:00.000Z'); // 62 days: past 60
    await s.logs(5, '2026-04-05T10:00:00.000Z'); // 57 days: kept
    await s.logs(6, '2026-06-01T11:00:00.000Z'); // today: kept, not rolled up yet
    await s.feedback('old', '2026-01-15T08:00:00.000Z');
    await s.feedback('new', '2026-05-30T08:00:00.000Z');

    const run = await retention.runOnce();
    expect(run.rolledUp).toEqual(['2025-05-01', '2026-01-15', '2026-03-31', '2026-04-05']); // days without logs are skipped
    expect(run).toMatchObject({ logsDeleted: PURGE_BATCH_ROWS * 2 + 500 + 20 + 3 + 4, feedbackDeleted: 1 });
    expect(run.dailyRowsDeleted).toBe(1); // 2025-05-01, past 365 days
    expect(await s.count('request_logs')).toBe(11);
    expect(await s.count('feedback')).toBe(1);

    const daily = await s.daily();
    expect(daily.map((d) => [d.day, d.provider, d.status_class, d.requests])).toEqual([
      ['2026-01-15', 'anthropic', '5xx', 20],
      ['2026-01-15', 'openai', '2xx', PURGE_BATCH_ROWS * 2 + 500],
      ['2026-03-31', 'openai', '2xx', 4],
      ['2026-04-05', 'openai', '2xx', 5],
    ]);
    const [anthropic, openai] = daily;
    expect(anthropic).toMatchObject({ organisation_id: s.ids.organisationId, workspace_id: s.ids.workspaceId, model: 'claude-3-5-haiku', errors: 20, total_tokens: 0, cost: 0, cache_hits: 20, latency_ms_sum: 2000 });
    expect(openai).toMatchObject({ model: 'gpt-4o-mini', errors: 0, prompt_tokens: (PURGE_BATCH_ROWS * 2 + 500) * 10, completion_tokens: (PURGE_BATCH_ROWS * 2 + 500) * 5, cache_hits: 0 });
    expect(openai!.cost).toBeCloseTo((PURGE_BATCH_ROWS * 2 + 500) * 0.002);

    // Nothing more to do until a day ends; then that day is rolled up, once.
    expect(await retention.runOnce()).toEqual({ rolledUp: [], logsDeleted: 0, feedbackDeleted: 0, exportsDeleted: 0, dailyRowsDeleted: 0 });
    clock.advance(DAY);
    expect((await retention.runOnce()).rolledUp).toEqual(['2026-06-01']);
    expect((await s.daily()).find((d) => d.day === '2026-06-01')?.requests).toBe(6);
    expect(await s.count('request_logs')).toBe(11);

    // A year on, the logs are gone and so are the daily rows older than 365 days.
    clock.advance(400 * DAY);
    const later = await retention.runOnce();
    expect(later.logsDeleted).toBe(11);
    expect(await s.count('request_logs')).toBe(0);
    expect((await s.daily()).map((d) => d.day)).toEqual([]);
  });

  it('keeps every log with the default 90 days, and deletes exports past it with their files', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T12:00:00.000Z'));
    const t = await startTestServer({ clock });
    const retention = (t.server.observability as Observability).retention;
    const s = await seeder(t);
    await s.logs(3, '2026-03-10T10:00:00.000Z'); // 83 days
    const admin = apiClient(t.baseUrl, t.adminKey);
    const exportId = (await admin.post('/v1/logs/exports', { filters: {}, requested_data: ['id'] })).body.id;
    await admin.post(`/v1/logs/exports/${exportId}/start`);
    for (let i = 0; i < 200 && (await admin.get(`/v1/logs/exports/${exportId}`)).body.status !== 'success'; i++) await sleep(25);
    const file = join(t.dataDir, 'exports', `${exportId}.jsonl`);
    expect(existsSync(file)).toBe(true);

    const run = await retention.runOnce();
    expect(run).toMatchObject({ logsDeleted: 0, exportsDeleted: 0 });
    expect(await s.count('request_logs')).toBe(3);
    clock.advance(91 * DAY);
    expect(await retention.runOnce()).toMatchObject({ logsDeleted: 3, exportsDeleted: 1 });
    expect(existsSync(file)).toBe(false);
    expect((await admin.get(`/v1/logs/exports/${exportId}`)).status).toBe(404);
  });
});
