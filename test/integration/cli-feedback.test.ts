import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newTimeOrderedId } from '../../src/lib/ids.js';
import { createRequestLogRepository } from '../../src/storage/repositories/request-logs.js';
import { cliAgainstServer } from '../helpers/cli.js';
import { createWorkspaceKey } from '../helpers/fixtures.js';
import { makeTempDir } from '../helpers/start-test-server.js';

describe('svcgw feedback', () => {
  it('creates and updates feedback with a workspace key; usage errors exit 2, refusals exit 1', async () => {
    const { api, ok, fails } = await cliAgainstServer();
    const key = await createWorkspaceKey(api, {
      workspace_id: 'default',
      scopes: ['feedback.create', 'feedback.update'],
    });
    const asWorkspace = { SVCGW_API_KEY: key.key };

    const created = await ok(
      [
        'feedback',
        'create',
        '--trace-id',
        'run-1',
        '--value',
        '-5',
        '--weight',
        '0.5',
        '--metadata',
        '{"reviewer":"qa"}',
      ],
      asWorkspace,
    );
    expect(created).toEqual({ status: 'success', message: 'feedback created', feedback_ids: [expect.any(String)] });
    const id = created.feedback_ids[0];
    expect(await ok(['feedback', 'update', id, '--value', '7'], asWorkspace)).toMatchObject({
      message: 'feedback updated',
      feedback_ids: [id],
    });

    await fails(['feedback', 'create', '--trace-id', 'run-1', '--value', '11'], 2, /-10 to 10/, asWorkspace);
    await fails(
      ['feedback', 'create', '--trace-id', 'run-1', '--value', '1', '--weight', '2'],
      2,
      /0 to 1/,
      asWorkspace,
    );
    await fails(
      ['feedback', 'create', '--trace-id', 'run-1', '--value', '1', '--metadata', '[1]'],
      2,
      /JSON object/,
      asWorkspace,
    );
    await fails(['feedback', 'create', '--value', '1'], 2, /--trace-id/, asWorkspace);
    // The admin key of the CLI's environment: the server's 403 on stderr, exit 1.
    await fails(['feedback', 'create', '--trace-id', 'run-1', '--value', '1'], 1, /KEY_TYPE_NOT_ALLOWED/);
    await fails(
      ['feedback', 'update', '00000000-0000-4000-8000-000000000000', '--value', '1'],
      1,
      /not found/,
      asWorkspace,
    );
  });
});

describe('svcgw logs export', () => {
  it('creates, starts, waits for and downloads an export as JSONL and CSV; cancels a draft', async () => {
    const { server, api, ok, fails, cli } = await cliAgainstServer();
    const db = server.server.db;
    const org = await db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    const ws = await db.selectFrom('workspaces').select('id').executeTakeFirstOrThrow();
    const key = await db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow();
    await createRequestLogRepository(db).insertBatch(
      Array.from({ length: 30 }, (_, i) => ({
        id: newTimeOrderedId(),
        trace_id: `t${i}`,
        request_id: `r${i}`,
        organisation_id: org.id,
        workspace_id: ws.id,
        api_key_id: key.id,
        provider: i < 10 ? 'anthropic' : 'openai',
        credential_source: 'direct',
        model: i < 10 ? 'claude-3-5-haiku' : 'gpt-4o',
        endpoint_type: 'chatComplete',
        method: 'POST',
        path: '/v1/chat/completions',
        status_code: 200,
        is_success: 1,
        is_stream: 0,
        latency_ms: 10,
        cost_currency: 'USD',
        cache_status: 'MISS',
        retry_count: 0,
        metadata: JSON.stringify({ env: i % 2 === 0 ? 'prod' : 'dev' }),
        created_at: new Date(Date.parse('2026-01-01T00:00:00Z') + i * 1000).toISOString(),
      })),
    );

    const created = await ok([
      'logs',
      'export',
      'create',
      '--provider',
      'openai',
      '--metadata',
      'env=prod',
      '--fields',
      'id,ai_model,metadata',
      '--start',
      '--wait',
    ]);
    expect(created).toMatchObject({
      status: 'success',
      total: 10,
      rows_written: 10,
      requested_data: ['id', 'ai_model', 'metadata'],
      filters: { ai_org: 'openai', metadata: { env: 'prod' } },
    });
    const status = await ok(['logs', 'export', 'status', created.id]);
    expect(status.status).toBe('success');
    expect((await ok(['logs', 'export', 'list'])).total).toBe(1);

    const stdout = await cli(['logs', 'export', 'download', created.id]);
    expect(stdout.code).toBe(0);
    const records = stdout.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(records).toHaveLength(10);
    expect(records.every((r) => r.ai_model === 'gpt-4o' && r.metadata.env === 'prod')).toBe(true);

    const out = join(makeTempDir(), 'export.csv');
    const saved = await cli(['logs', 'export', 'download', created.id, '--format', 'csv', '-o', out]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const lines = readFileSync(out, 'utf8').split('\r\n').filter(Boolean);
    expect(lines[0]).toBe('id,ai_model,metadata');
    expect(lines).toHaveLength(11);
    expect(lines[1]).toMatch(/^[0-9a-f-]{36},gpt-4o,"\{""env"":""prod""\}"$/);

    const draft = await ok(['logs', 'export', 'create', '--since', '2026-01-01T00:00:20Z']);
    expect(draft).toMatchObject({ status: 'draft', total: 10 });
    await ok(['logs', 'export', 'cancel', draft.id]);
    await fails(['logs', 'export', 'cancel', draft.id], 1, /CONFLICT/);
    await fails(['logs', 'export', 'download', draft.id], 1, /CONFLICT/);
    await fails(['logs', 'export', 'download', created.id, '--format', 'xml'], 2, /xml/);
    await fails(['logs', 'export', 'create', '--fields', 'id,password'], 1, /requested_data/);
    expect((await api.get(`/v1/logs/exports/${draft.id}`)).body.status).toBe('stopped');
  });
});
