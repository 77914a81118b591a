import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRequestLogRepository, type RequestLogInsert } from '../../src/storage/repositories/request-logs.js';
import { cliAgainstServer } from '../helpers/cli.js';

describe('svcgw analytics', () => {
  it('prints the summary, groups and time series, as JSON or tables, and refuses bad usage with exit 2', async () => {
    const { server, ok, cli, fails } = await cliAgainstServer();
    const { organisationId, workspaceId } = server.server.bootstrap;
    const now = Date.now();
    const row = (model: string, status: number, latency: number, minutesAgo: number): RequestLogInsert => ({
      id: randomUUID(),
      trace_id: randomUUID(),
      request_id: randomUUID(),
      organisation_id: organisationId,
      workspace_id: workspaceId,
      api_key_id: randomUUID(),
      provider: 'openai',
      credential_source: 'direct',
      model,
      endpoint_type: 'chatComplete',
      method: 'POST',
      path: '/v1/chat/completions',
      status_code: status,
      is_success: status === 200 ? 1 : 0,
      is_stream: 0,
      latency_ms: latency,
      prompt_tokens: 3,
      completion_tokens: 7,
      total_tokens: 10,
      cost: 0.25,
      cost_currency: 'USD',
      cache_status: 'DISABLED',
      metadata: model === 'gpt-4o' ? '{"env":"prod"}' : null,
      retry_count: 0,
      created_at: new Date(now - minutesAgo * 60_000).toISOString(),
    });
    await createRequestLogRepository(server.server.db).insertBatch([
      row('gpt-4o', 200, 100, 5),
      row('gpt-4o', 500, 300, 4),
      row('gpt-4o-mini', 200, 50, 3),
    ]);

    const summary = await ok(['analytics', 'summary']);
    expect(summary.summary).toMatchObject({ requests: 3, errors: 1, cost: 0.75, total_tokens: 30, p99_latency: 300 });
    expect(
      (await ok(['analytics', 'summary', '--metadata', 'env=prod', '--status-code', '500'])).summary.requests,
    ).toBe(1);

    const groups = await ok(['analytics', 'groups', 'model', '--columns', 'error_count,avg_latency']);
    expect(groups.data).toEqual([
      { model: 'gpt-4o', requests: 2, error_count: 1, avg_latency: 200, object: 'analytics-group' },
      { model: 'gpt-4o-mini', requests: 1, error_count: 0, avg_latency: 50, object: 'analytics-group' },
    ]);
    expect((await ok(['analytics', 'groups', 'status_code', '--logs'])).total).toBe(2);
    const table = await cli(['analytics', 'groups', 'model', '--columns', 'cost']);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^MODEL\s+REQUESTS\s+COST$/);
    expect(table.stdout).toMatch(/gpt-4o\s+2\s+0\.5/);

    const series = await ok([
      'analytics',
      'timeseries',
      'requests',
      '--interval',
      'hour',
      '--since',
      new Date(now - 3 * 3_600_000).toISOString(),
    ]);
    expect(series.data_points.length).toBeGreaterThanOrEqual(4);
    expect(series.summary.total).toBe(3);
    const text = await cli(['analytics', 'timeseries', 'errors']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/TIMESTAMP\s+TOTAL/);

    await fails(['analytics', 'groups', 'colour'], 2, /colour/);
    await fails(['analytics', 'groups', 'model', '--columns', 'bogus'], 2, /bogus/);
    await fails(['analytics', 'timeseries', 'requests', '--interval', 'week'], 2, /week/);
    await fails(
      ['analytics', 'summary', '--since', '2026-02-01T00:00:00Z', '--until', '2026-01-01T00:00:00Z'],
      1,
      /start_time/,
    );
  });
});
