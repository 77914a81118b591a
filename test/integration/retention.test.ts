import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import '../../src/admin/analytics/tables.js';
import { PURGE_BATCH_ROWS } from '../../src/admin/observability/retention/retention-worker.js';
import { createManualClock } from '../../src/lib/clock.js';
import { newId, newTimeOrderedId } from '../../src/lib/ids.js';
import { createRequestLogRepository, type RequestLogInsert } from '../../src/storage/repositories/request-logs.js';
import { engineOf } from '../../src/storage/database.js';
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
        id: newTimeOrderedId(),
        trace_id: `t-${at}-${i}`,
        request_id: newTimeOrderedId(),
        organisation_id: org.id,
        workspace_id: ws.id,
        api_key_id: key.id,
        provider: 'openai',
        credential_source: 'direct',
        model: 'gpt-4o-mini',
        endpoint_type: 'chatComplete',
        method: 'POST',
        path: '/v1/chat/completions',
        status_code: 200,
        is_success: 1,
        is_stream: 0,
        latency_ms: 100,
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        cost: 0.002,
        cost_currency: 'USD',
        cache_status: 'MISS',
        retry_count: 0,
        created_at: new Date(Date.parse(at) + i).toISOString(),
        ...overrides,
      }));
      await repo.insertBatch(rows);
    },
    async feedback(traceId: string, at: string) {
      await db
        .insertInto('feedback')
        .values({
          id: newId(),
          organisation_id: org.id,
          workspace_id: ws.id,
          trace_id: traceId,
          value: 1,
          weight: 1,
          metadata: null,
          api_key_id: key.id,
          created_at: at,
          last_updated_at: at,
        })
        .execute();
    },
    count: async (
      table: 'request_logs' | 'feedback' | 'analytics_rollups' | 'analytics_key_rollups' | 'log_export_chunks',
    ) =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
  };
}

describe('retention', () => {
  it('deletes logs past LOG_RETENTION_DISPLAY while analytics keep counting them from rollups, and rollups past METRICS_RETENTION_DISPLAY', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T12:00:00.000Z'));
    const t = await startTestServer({ clock, env: { LOG_RETENTION_DISPLAY: '60', METRICS_RETENTION_DISPLAY: '365' } });
    const retention = t.server.observability.retention;
    const admin = apiClient(t.baseUrl, t.adminKey);
    const s = await seeder(t);
    await s.logs(PURGE_BATCH_ROWS * 2 + 500, '2026-01-15T08:00:00.000Z'); // several delete batches
    await s.logs(20, '2026-01-15T09:00:00.000Z', {
      provider: 'anthropic',
      model: 'claude-3-5-haiku',
      status_code: 502,
      is_success: 0,
      cost: null,
      total_tokens: null,
      prompt_tokens: null,
      completion_tokens: null,
      cache_status: 'HIT',
    });
    await s.logs(3, '2025-05-01T10:00:00.000Z'); // past both retentions
    await s.logs(4, '2026-03-31T23:00:00.000Z'); // 62 days: past 60
    await s.logs(5, '2026-04-05T10:00:00.000Z'); // 57 days: kept
    await s.logs(6, '2026-06-01T11:00:00.000Z'); // today
    await s.feedback('old', '2026-01-15T08:00:00.000Z');
    await s.feedback('new', '2026-05-30T08:00:00.000Z');

    const run = await retention.runOnce();
    expect(run).toMatchObject({ logsDeleted: PURGE_BATCH_ROWS * 2 + 500 + 20 + 3 + 4, feedbackDeleted: 1 });
    // 2025-05-01 is before 2025-06-01, the first day of the 365 kept: its hour, day, week and four weeks, in the
    // full and key rollups (8), and in the narrow rollups once per dimension (7 × 4).
    expect(run.rollupRowsDeleted).toBe(8 + 28);
    expect(await s.count('request_logs')).toBe(11);
    expect(await s.count('feedback')).toBe(1);

    // The logs of 2026-01-15 are gone; analytics still count them, from the rollups.
    const window = 'start_time=2026-01-15T00:00:00Z&end_time=2026-01-15T23:59:59.999Z';
    const day = (await admin.get(`/v1/analytics/summary?${window}`)).body.summary;
    expect(day).toMatchObject({
      requests: PURGE_BATCH_ROWS * 2 + 520,
      errors: 20,
      cache_hits: 20,
      prompt_tokens: (PURGE_BATCH_ROWS * 2 + 500) * 10,
      total_tokens: (PURGE_BATCH_ROWS * 2 + 500) * 15,
      p99_latency: 100,
    });
    expect(day.cost).toBeCloseTo((PURGE_BATCH_ROWS * 2 + 500) * 0.002);
    expect(
      (await admin.get(`/v1/analytics/groups/ai_service?${window}`)).body.data.map((g: any) => [
        g.ai_service,
        g.requests,
      ]),
    ).toEqual([
      ['openai', PURGE_BATCH_ROWS * 2 + 500],
      ['anthropic', 20],
    ]);
    expect(
      (
        await admin.get(
          '/v1/analytics/graphs/requests?start_time=2026-03-31T00:00:00Z&end_time=2026-04-05T23:00:00Z&interval=day',
        )
      ).body.data_points.map((p: any) => p.total),
    ).toEqual([4, 0, 0, 0, 0, 5]);

    // Nothing more to do until time passes.
    expect(await retention.runOnce()).toEqual({
      logsDeleted: 0,
      feedbackDeleted: 0,
      exportsDeleted: 0,
      rollupRowsDeleted: 0,
    });

    // A year on, the logs are gone, and so are the rollups older than 365 days.
    clock.advance(400 * DAY);
    const later = await retention.runOnce();
    expect(later.logsDeleted).toBe(11);
    expect(await s.count('request_logs')).toBe(0);
    expect(await s.count('analytics_rollups')).toBe(0);
    expect(await s.count('analytics_key_rollups')).toBe(0);
  });

  it('keeps every log with the default 90 days, and deletes exports past it with their files', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T12:00:00.000Z'));
    const t = await startTestServer({ clock });
    const retention = t.server.observability.retention;
    const s = await seeder(t);
    await s.logs(3, '2026-03-10T10:00:00.000Z'); // 83 days
    const admin = apiClient(t.baseUrl, t.adminKey);
    const exportId = (await admin.post('/v1/logs/exports', { filters: {}, requested_data: ['id'] })).body.id;
    await admin.post(`/v1/logs/exports/${exportId}/start`);
    for (let i = 0; i < 200 && (await admin.get(`/v1/logs/exports/${exportId}`)).body.status !== 'success'; i++)
      await sleep(25);
    // On one box the file is on disk; on PostgreSQL it is stored in the database, where every instance finds it.
    const file = join(t.dataDir, 'exports', `${exportId}.jsonl`);
    const stored = async () =>
      engineOf(t.server.db) === 'postgres' ? (await s.count('log_export_chunks')) > 0 : existsSync(file);
    expect(await stored()).toBe(true);

    const run = await retention.runOnce();
    expect(run).toMatchObject({ logsDeleted: 0, exportsDeleted: 0 });
    expect(await s.count('request_logs')).toBe(3);
    clock.advance(91 * DAY);
    expect(await retention.runOnce()).toMatchObject({ logsDeleted: 3, exportsDeleted: 1 });
    expect(await stored()).toBe(false);
    expect((await admin.get(`/v1/logs/exports/${exportId}`)).status).toBe(404);
  });
});
