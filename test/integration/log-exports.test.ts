import { statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { EXPORT_BATCH_ROWS } from '../../src/admin/observability/exports/export-runner.js';
import { createManualClock } from '../../src/lib/clock.js';
import { newTimeOrderedId } from '../../src/lib/ids.js';
import { createRequestLogRepository, type RequestLogInsert } from '../../src/storage/repositories/request-logs.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const ROWS = EXPORT_BATCH_ROWS * 2 + 37; // several batches

async function seed(t: TestServer, workspaceSlug = 'default') {
  const org = await t.server.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
  const ws = await t.server.db
    .selectFrom('workspaces')
    .select('id')
    .where('slug', '=', workspaceSlug)
    .executeTakeFirstOrThrow();
  const key = await t.server.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow();
  const rows: RequestLogInsert[] = [];
  for (let i = 0; i < ROWS; i++) {
    rows.push({
      id: newTimeOrderedId(),
      trace_id: `trace-${i}`,
      request_id: newTimeOrderedId(),
      organisation_id: org.id,
      workspace_id: ws.id,
      api_key_id: key.id,
      provider: i % 3 === 0 ? 'anthropic' : 'openai',
      credential_source: 'direct',
      model: i % 3 === 0 ? 'claude-3-5-haiku' : 'gpt-4o-mini',
      endpoint_type: 'chatComplete',
      method: 'POST',
      path: '/v1/chat/completions',
      status_code: i % 10 === 0 ? 500 : 200,
      is_success: i % 10 === 0 ? 0 : 1,
      is_stream: 0,
      latency_ms: 100 + i,
      prompt_tokens: 10,
      completion_tokens: i,
      total_tokens: 10 + i,
      cost: 0.001,
      cost_currency: 'USD',
      cache_status: 'MISS',
      retry_count: 0,
      metadata: JSON.stringify({ team: i % 2 === 0 ? 'search' : 'chat', note: 'a "quoted", comma' }),
      request_body: JSON.stringify({ messages: [{ role: 'user', content: `question ${i}` }] }),
      response_body: JSON.stringify({ choices: [] }),
      created_at: new Date(Date.parse('2026-01-01T00:00:00Z') + i * 1000).toISOString(),
    });
  }
  await createRequestLogRepository(t.server.db).insertBatch(rows);
  return rows;
}

async function finished(client: ApiClient, id: string): Promise<any> {
  for (let i = 0; i < 400; i++) {
    const res = await client.get(`/v1/logs/exports/${id}`);
    if (res.body.status !== 'in_progress') return res.body;
    await sleep(25);
  }
  throw new Error('the export did not finish');
}

describe('log exports', () => {
  it('creates, starts and downloads an export as JSONL and CSV with only the filtered logs and the requested fields', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const rows = await seed(t);
    const expected = rows.filter(
      (r) =>
        r.provider === 'openai' &&
        r.status_code === 200 &&
        JSON.parse(r.metadata!).team === 'search' &&
        r.created_at >= '2026-01-01T00:01:00.000Z',
    );

    const created = await admin.post('/v1/logs/exports', {
      workspace_id: 'default',
      filters: {
        time_of_generation_min: '2026-01-01T00:01:00Z',
        ai_org: 'openai',
        status_code: 200,
        metadata: { team: 'search' },
      },
      requested_data: ['id', 'ai_model', 'res_units', 'metadata', 'request'],
      description: 'search team',
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.any(String), total: expected.length, object: 'export' });
    const id = created.body.id;
    const draft = await admin.get(`/v1/logs/exports/${id}`);
    expect(draft.body).toMatchObject({
      id,
      status: 'draft',
      total: expected.length,
      rows_written: 0,
      requested_data: ['id', 'ai_model', 'res_units', 'metadata', 'request'],
      filters: { ai_org: 'openai' },
      description: 'search team',
      object: 'export',
    });
    expect((await admin.get(`/v1/logs/exports/${id}/download`)).body.error.code).toBe('CONFLICT');

    expect((await admin.post(`/v1/logs/exports/${id}/start`)).body).toEqual({
      message: 'export started',
      object: 'export',
    });
    const done = await finished(admin, id);
    expect(done).toMatchObject({ status: 'success', rows_written: expected.length, error: null });
    expect(done.finished_at).not.toBeNull();
    // On SQLite the file is on disk, readable by the server's user only; on PostgreSQL it is in
    // the database (log_export_chunks), so any instance can serve it.
    const onDisk = process.env.SVCGW_TEST_ENGINE !== 'postgres';
    const file = join(t.dataDir, 'exports', `${id}.jsonl`);
    if (onDisk) expect(statSync(file).mode & 0o777).toBe(0o600);

    const jsonl = await fetch(`${t.baseUrl}/v1/logs/exports/${id}/download?format=jsonl`, {
      headers: { 'x-service-api-key': t.adminKey },
    });
    expect(jsonl.status).toBe(200);
    expect(jsonl.headers.get('content-type')).toContain('application/x-ndjson');
    expect(jsonl.headers.get('content-disposition')).toContain(`log-export-${id}.jsonl`);
    const records = (await jsonl.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(records.map((r) => r.id)).toEqual(expected.map((r) => r.id));
    expect(Object.keys(records[0])).toEqual(['id', 'ai_model', 'res_units', 'metadata', 'request']);
    expect(records[0]).toEqual({
      id: expected[0]!.id,
      ai_model: 'gpt-4o-mini',
      res_units: expected[0]!.completion_tokens,
      metadata: JSON.parse(expected[0]!.metadata!),
      request: JSON.parse(expected[0]!.request_body!),
    });

    const csv = await fetch(`${t.baseUrl}/v1/logs/exports/${id}/download?format=csv`, {
      headers: { 'x-service-api-key': t.adminKey },
    });
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const lines = (await csv.text()).split('\r\n').filter(Boolean);
    expect(lines[0]).toBe('id,ai_model,res_units,metadata,request');
    expect(lines).toHaveLength(expected.length + 1);
    // Quotes doubled, the cell quoted: RFC 4180.
    expect(lines[1]).toBe(
      `${expected[0]!.id},gpt-4o-mini,${expected[0]!.completion_tokens},"{""team"":""search"",""note"":""a \\""quoted\\"", comma""}","{""messages"":[{""role"":""user"",""content"":""question ${expected[0]!.completion_tokens}""}]}"`,
    );

    // A finished export is not started again; a changed one is a draft again, and its file is gone.
    expect((await admin.post(`/v1/logs/exports/${id}/start`)).body.error.code).toBe('CONFLICT');
    const changed = await admin.put(`/v1/logs/exports/${id}`, {
      filters: { ai_org_model: 'anthropic__claude-3-5-haiku' },
    });
    expect(changed.body).toEqual({
      id,
      total: rows.filter((r) => r.provider === 'anthropic').length,
      object: 'export',
    });
    expect((await admin.get(`/v1/logs/exports/${id}`)).body).toMatchObject({ status: 'draft', rows_written: 0 });
    if (onDisk) expect(() => statSync(file)).toThrow();

    const list = await admin.get('/v1/logs/exports');
    expect(list.body).toMatchObject({ object: 'list', total: 1, data: [{ id, object: 'export' }] });
    const audit = await admin.get('/v1/audit-logs?resource_type=log_export');
    expect((audit.body.records ?? audit.body.data).map((r: { action: string }) => r.action).sort()).toEqual([
      'create',
      'start',
      'start',
      'update',
    ]);
  });

  it('cancels drafts, validates filters and fields, and keeps workspace keys to their own workspace', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team', 'team');
    const body = { filters: {}, requested_data: ['id'] };

    for (const [bad, param] of [
      [{ filters: {}, requested_data: [] }, 'requested_data'],
      [{ filters: {}, requested_data: ['password'] }, 'requested_data'],
      [{ filters: {}, requested_data: ['id', 'id'] }, 'requested_data'],
      [{ filters: { colour: 'red' }, requested_data: ['id'] }, 'filters'],
      [{ filters: { status_code: '2xx' }, requested_data: ['id'] }, 'filters'],
      [{ filters: { metadata: { 'a"b': 'x' } }, requested_data: ['id'] }, 'filters'],
      [{ requested_data: ['id'] }, 'filters'],
    ] as const) {
      const res = await admin.post('/v1/logs/exports', bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error.param ?? '').toContain(param);
    }

    const draft = (await admin.post('/v1/logs/exports', body)).body.id;
    expect((await admin.post(`/v1/logs/exports/${draft}/cancel`)).body).toEqual({
      message: 'export cancelled',
      object: 'export',
    });
    expect((await admin.get(`/v1/logs/exports/${draft}`)).body.status).toBe('stopped');
    expect((await admin.post(`/v1/logs/exports/${draft}/cancel`)).body.error.code).toBe('CONFLICT');
    // A stopped export can be started again; with no logs it finishes empty.
    await admin.post(`/v1/logs/exports/${draft}/start`);
    expect(await finished(admin, draft)).toMatchObject({ status: 'success', rows_written: 0 });
    expect(
      await (
        await fetch(`${t.baseUrl}/v1/logs/exports/${draft}/download?format=jsonl`, {
          headers: { 'x-service-api-key': t.adminKey },
        })
      ).text(),
    ).toBe('');

    const teamKey = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team', scopes: ['logs.export'] })).key,
    );
    const teamExport = await teamKey.post('/v1/logs/exports', body);
    expect(teamExport.status).toBe(200);
    expect((await teamKey.get('/v1/logs/exports')).body.data.map((e: { id: string }) => e.id)).toEqual([
      teamExport.body.id,
    ]);
    expect((await teamKey.get(`/v1/logs/exports/${draft}`)).status).toBe(404);
    expect((await teamKey.post(`/v1/logs/exports/${draft}/start`)).status).toBe(404);
    expect((await teamKey.post('/v1/logs/exports', { ...body, workspace_id: 'default' })).body.error.code).toBe(
      'WORKSPACE_FORBIDDEN',
    );
    expect((await admin.get('/v1/logs/exports?workspace_id=team')).body.total).toBe(1);

    const noScope = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team', scopes: ['logs.list', 'logs.view'] })).key,
    );
    expect((await noScope.get('/v1/logs/exports')).body.error.code).toBe('MISSING_SCOPE');
    expect((await admin.get('/v1/logs/exports/not-an-id')).status).toBe(404);
  });

  it("answers the reference's {signed_url}: a link on public_url that streams the file without a key until it expires", async () => {
    const clock = createManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const t = await startTestServer({ clock, env: { SVCGW_PUBLIC_URL: 'https://gw.example.test/' } });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const rows = await seed(t);
    const id = (await admin.post('/v1/logs/exports', { filters: {}, requested_data: ['id', 'ai_org'] })).body.id;
    await admin.post(`/v1/logs/exports/${id}/start`);
    expect(await finished(admin, id)).toMatchObject({ status: 'success', rows_written: rows.length });

    const answer = await admin.get(`/v1/logs/exports/${id}/download`);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body)).toEqual(['signed_url']);
    const signed = new URL(answer.body.signed_url);
    expect(signed.origin).toBe('https://gw.example.test');
    expect(signed.pathname).toBe(`/v1/logs/exports/${id}/file`);
    // The public address is not this test's socket: the same path and query, sent to it.
    const local = (url: URL, extra = '') => `${t.baseUrl}${url.pathname}${url.search}${extra}`;

    const file = await fetch(local(signed)); // no API key
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toContain('application/x-ndjson');
    const ids = (await file.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).id);
    expect(ids).toEqual(rows.map((r) => r.id));
    const csv = await fetch(local(signed, '&format=csv'));
    expect((await csv.text()).split('\r\n')[0]).toBe('id,ai_org');

    const refused = async (url: string, message: string) => {
      const res = await fetch(url);
      expect(res.status, url).toBe(403);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('INVALID_DOWNLOAD_LINK');
      expect(body.error.message).toContain(message);
    };
    const token = signed.searchParams.get('token')!;
    const [expires, mac] = token.split('.') as [string, string];
    const withToken = (value: string, exportId = id) => `${t.baseUrl}/v1/logs/exports/${exportId}/file?token=${value}`;
    // Tampered: a later expiry, another signature, another export, nothing.
    await refused(withToken(`${Number(expires) + 3_600_000}.${mac}`), 'not valid');
    await refused(withToken(`${expires}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`), 'not valid');
    await refused(withToken(token, '00000000-0000-4000-8000-000000000000'), 'not valid');
    await refused(withToken('x'), 'not valid');
    expect((await fetch(`${t.baseUrl}/v1/logs/exports/${id}/file`)).status).toBe(400);

    // Works to the last moment before the expiry on the server's clock, not after.
    clock.advance(15 * 60_000 - 1);
    expect((await fetch(local(signed))).status).toBe(200);
    clock.advance(1);
    await refused(local(signed), 'expired');

    // A re-run export makes earlier links invalid; the key-authenticated download streams as before.
    const fresh = new URL((await admin.get(`/v1/logs/exports/${id}/download`)).body.signed_url);
    await admin.put(`/v1/logs/exports/${id}`, { filters: {} });
    clock.advance(1000);
    await admin.post(`/v1/logs/exports/${id}/start`);
    await finished(admin, id);
    await refused(local(fresh), 'not valid');
    const streamed = await fetch(`${t.baseUrl}/v1/logs/exports/${id}/download?format=jsonl`, {
      headers: { 'x-service-api-key': t.adminKey },
    });
    expect((await streamed.text()).trim().split('\n')).toHaveLength(rows.length);
  });

  it('DATA_EXPORTS_ENABLED=OFF turns every export route off', async () => {
    const t = await startTestServer({ env: { DATA_EXPORTS_ENABLED: 'OFF' } });
    const admin = apiClient(t.baseUrl, t.adminKey);
    for (const res of [
      await admin.get('/v1/logs/exports'),
      await admin.post('/v1/logs/exports', { filters: {}, requested_data: ['id'] }),
      await admin.get('/v1/logs/exports/00000000-0000-4000-8000-000000000000/download'),
      await admin.get('/v1/logs/exports/00000000-0000-4000-8000-000000000000/file?token=1.x'),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FEATURE_DISABLED');
      expect(res.body.error.message).toContain('DATA_EXPORTS_ENABLED=OFF');
    }
    expect((await admin.get('/v1/logs')).status).toBe(200);
  });
});
