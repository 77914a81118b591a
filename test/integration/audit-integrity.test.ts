import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { newTimeOrderedId } from '../../src/lib/ids.js';
import { DATABASE_FILE, engineOf, type Db } from '../../src/storage/database.js';
import type { RequestLogInsert } from '../../src/storage/repositories/request-logs.js';
import { createWorkspace } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

/**
 * Makes the server's own database refuse a write (a real failure of the store, on either engine):
 * a trigger that raises `message` before `event` on `table`, when `when` (an SQL condition on
 * NEW or OLD) holds. Returns the repair.
 */
async function refuseWrites(db: Db, table: string, event: 'INSERT' | 'DELETE', message: string, when?: string) {
  const name = `refuse_${table}`;
  if (engineOf(db) === 'postgres') {
    await sql
      .raw(
        `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '${message}'; END $$`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER ${name} BEFORE ${event} ON ${table} FOR EACH ROW ${when ? `WHEN (${when})` : ''} EXECUTE FUNCTION ${name}()`,
      )
      .execute(db);
    return async () => {
      await sql.raw(`DROP TRIGGER ${name} ON ${table}`).execute(db);
      await sql.raw(`DROP FUNCTION ${name}()`).execute(db);
    };
  }
  await sql
    .raw(
      `CREATE TRIGGER ${name} BEFORE ${event} ON ${table} ${when ? `WHEN ${when}` : ''} BEGIN SELECT RAISE(ABORT, '${message}'); END`,
    )
    .execute(db);
  return async () => void (await sql.raw(`DROP TRIGGER ${name}`).execute(db));
}

/** The audit store refuses records of one action. */
const breakAuditFor = (t: TestServer, action: string) =>
  refuseWrites(t.server.db, 'audit_logs', 'INSERT', 'audit store refused the record', `NEW.action = '${action}'`);

/**
 * Everything the server stored, as text: the SQLite file and its WAL once the server has stopped,
 * or every row of every table of its PostgreSQL database (then it stops).
 */
async function storedText(g: { server: TestServer['server']; dataDir: string; close(): Promise<void> }) {
  const db = g.server.db;
  if (engineOf(db) === 'postgres') {
    const tables = await sql<{ name: string }>`
      select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db);
    const rows = await Promise.all(
      tables.rows.map(({ name }) => sql<{ row: string }>`select t::text as row from ${sql.table(name)} t`.execute(db)),
    );
    await g.close();
    return rows.flatMap((r) => r.rows.map((row) => row.row)).join('\n');
  }
  await g.close();
  const files = [DATABASE_FILE, `${DATABASE_FILE}-wal`].map((name) => join(g.dataDir, name)).filter(existsSync);
  return files.map((file) => readFileSync(file).toString('latin1')).join('');
}

async function auditActions(admin: ApiClient, resourceId: string): Promise<Array<[string, number]>> {
  const res = await admin.get(`/v1/audit-logs?resource_id=${resourceId}&page_size=100`);
  return [...res.body.data].reverse().map((r: any) => [r.action, r.response_status_code]);
}

function expectInternalError(res: { status: number; body: any }) {
  expect(res.status).toBe(500);
  expect(res.body).toEqual({
    error: {
      message: expect.stringContaining('Internal server error'),
      type: expect.any(String),
      param: null,
      code: 'INTERNAL_ERROR',
    },
  });
}

/** Microsoft's token endpoint (client credentials): records the client secrets it is sent. */
async function startTokenEndpoint() {
  const secrets: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      secrets.push(new URLSearchParams(body).get('client_secret') ?? '');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ token_type: 'Bearer', expires_in: 3599, access_token: 'entra-token' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, secrets };
}

/** `{ n: { n: … { ...leaf } } }` with `levels` objects above the leaf. */
function nested(levels: number, leaf: Record<string, unknown>): Record<string, unknown> {
  let value: Record<string, unknown> = leaf;
  for (let i = 0; i < levels; i++) value = { n: value };
  return value;
}

describe('an admin change and its audit record commit together', () => {
  it('undoes an unarchive whose record cannot be written, answers 500 in the one error body, and commits both once the store works', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const ws = await createWorkspace(admin, 'Team A', 'team-a');
    expect((await admin.delete(`/v1/workspaces/${ws.id}`)).status).toBe(200);

    const repair = await breakAuditFor(t, 'unarchive');
    expectInternalError(await admin.post(`/v1/workspaces/${ws.id}/unarchive`));
    expect((await admin.get(`/v1/workspaces/${ws.id}`)).body.status).toBe('archived');
    expect(await auditActions(admin, ws.id)).toEqual([
      ['create', 200],
      ['archive', 200],
    ]);
    expect(t.logLines.some((line) => line.includes('audit record could not be written'))).toBe(true);

    await repair();
    expect((await admin.post(`/v1/workspaces/${ws.id}/unarchive`)).status).toBe(200);
    expect((await admin.get(`/v1/workspaces/${ws.id}`)).body.status).toBe('active');
    expect(await auditActions(admin, ws.id)).toEqual([
      ['create', 200],
      ['archive', 200],
      ['unarchive', 200],
    ]);
  });

  it('undoes a usage reset whose record cannot be written', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/workspaces', {
      name: 'Team B',
      slug: 'team-b',
      usage_limits: { credit_limit: 10, periodic_reset: 'monthly' },
    });
    expect(created.status).toBe(200);
    const before = (await admin.get('/v1/workspaces/team-b')).body;

    const repair = await breakAuditFor(t, 'update');
    expectInternalError(await admin.put('/v1/workspaces/team-b', { name: 'Renamed', reset_usage: true }));
    const after = (await admin.get('/v1/workspaces/team-b')).body;
    expect(after).toEqual(before);
    await repair();
    expect((await admin.put('/v1/workspaces/team-b', { name: 'Renamed', reset_usage: true })).status).toBe(200);
    expect((await admin.get('/v1/workspaces/team-b')).body.name).toBe('Renamed');
    expect(await auditActions(admin, created.body.id)).toEqual([
      ['create', 200],
      ['update', 200],
    ]);
  });

  it('undoes a budget bucket reset whose record cannot be written: the budget still refuses', async () => {
    const g = await startGateway();
    const created = await g.admin.post('/v1/policies/usage-limits', {
      workspace_id: 'default',
      name: 'per user',
      conditions: [{ key: 'workspace_id', value: 'default' }],
      group_by: [{ key: 'metadata.user' }],
      type: 'tokens',
      credit_limit: 25,
    });
    const asAnn = { ...g.viaMock, 'x-service-metadata': JSON.stringify({ user: 'ann' }) };
    const priced = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(32) }], max_tokens: 5 }; // reserves 21 tokens; the mock reports 13 used, so a second one does not fit in 25
    const first = await g.admin.post('/v1/chat/completions', priced, asAnn);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await g.logs(1);
    await g.server.limits.flush();
    expect((await g.admin.post('/v1/chat/completions', priced, asAnn)).status).toBe(402);

    const repair = await breakAuditFor(g, 'reset_usage');
    expectInternalError(await g.admin.put(`/v1/policies/usage-limits/${created.body.id}/entities/ann/reset`, {}));
    expect((await g.admin.post('/v1/chat/completions', priced, asAnn)).status).toBe(402);
    await repair();
    expect((await g.admin.put(`/v1/policies/usage-limits/${created.body.id}/entities/ann/reset`, {})).status).toBe(200);
    expect((await g.admin.post('/v1/chat/completions', priced, asAnn)).status).toBe(200);
  });

  it('keeps request logs written while an undone change held the database', async () => {
    // Logs are written only when flushed, so the export start's own flush writes this one inside its transaction.
    const t = await startTestServer({ env: { SVCGW_LOG_FLUSH_INTERVAL_MS: '60000' } });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const exp = await admin.post('/v1/logs/exports', { workspace_id: 'default', filters: {}, requested_data: ['id'] });
    expect(exp.status).toBe(200);
    const ids = await t.server.db
      .selectFrom('api_keys')
      .innerJoin('workspaces', 'workspaces.organisation_id', 'api_keys.organisation_id')
      .select(['api_keys.id as keyId', 'api_keys.organisation_id as orgId', 'workspaces.id as wsId'])
      .where('workspaces.slug', '=', 'default')
      .executeTakeFirstOrThrow();
    const log: RequestLogInsert = {
      id: newTimeOrderedId(),
      trace_id: 'trace-kept',
      request_id: newTimeOrderedId(),
      organisation_id: ids.orgId,
      workspace_id: ids.wsId,
      api_key_id: ids.keyId,
      provider: 'openai',
      credential_source: 'direct',
      model: 'gpt-4o-mini',
      endpoint_type: 'chatComplete',
      method: 'POST',
      path: '/v1/chat/completions',
      status_code: 200,
      is_success: 1,
      is_stream: 0,
      latency_ms: 5,
      prompt_tokens: 1,
      completion_tokens: 1,
      total_tokens: 2,
      cost: 0,
      cost_currency: 'USD',
      cache_status: 'MISS',
      retry_count: 0,
      created_at: new Date().toISOString(),
    };
    t.server.requestLogs.enqueue(log);

    const repair = await breakAuditFor(t, 'start');
    expectInternalError(await admin.post(`/v1/logs/exports/${exp.body.id}/start`));
    expect((await admin.get(`/v1/logs/exports/${exp.body.id}`)).body.status).toBe('draft');
    const kept = await t.server.db
      .selectFrom('request_logs')
      .select('id')
      .where('trace_id', '=', 'trace-kept')
      .execute();
    expect(kept).toHaveLength(1);
    await repair();
  });

  it('undoes the first write of a change that fails at its second, and records the failure', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const policy = (
      await admin.post('/v1/policies/usage-limits', {
        conditions: [{ key: 'workspace_id', value: 'default' }],
        group_by: [{ key: 'api_key' }],
        type: 'cost',
        credit_limit: 100,
        workspace_id: 'default',
      })
    ).body;
    const row = await t.server.db
      .selectFrom('usage_limit_policies')
      .selectAll()
      .where('id', '=', policy.id)
      .executeTakeFirstOrThrow();
    await t.server.db
      .insertInto('usage_counters')
      .values({
        scope_type: 'policy',
        scope_id: policy.id,
        value_key: 'k1',
        period_start: row.last_reset_at ?? row.created_at,
        current_usage: 5,
        last_updated_at: row.created_at,
      })
      .execute();
    // The update writes the policy, then the usage reset deletes the bucket: that second write fails.
    await refuseWrites(t.server.db, 'usage_counters', 'DELETE', 'bucket locked');

    const res = await admin.put(`/v1/policies/usage-limits/${policy.id}`, {
      credit_limit: 999,
      reset_usage_for_value: 'k1',
    });
    expectInternalError(res);
    expect((await admin.get(`/v1/policies/usage-limits/${policy.id}`)).body.credit_limit).toBe(100);
    expect(await auditActions(admin, policy.id)).toEqual([
      ['create', 200],
      ['update', 500],
    ]);
  });
});

describe('audit records of any body', () => {
  it('redacts a secret nested 50 deep and records a 200-deep body without a 500 or the secret in clear', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);

    const body = {
      name: 'deep',
      config: { override_params: nested(48, { client_secret: 'deep-secret-50', keep: 'visible' }) },
    };
    const res = await admin.post('/v1/configs', body);
    expect(res.status).toBeLessThan(500);
    const record = (await admin.get('/v1/audit-logs?resource_type=config')).body.data[0];
    let leaf = record.request_body.config.override_params;
    for (let i = 0; i < 48; i++) leaf = leaf.n;
    expect(leaf).toEqual({ client_secret: '[REDACTED]', keep: 'visible' });

    // 200 levels, secrets at 150: refused (by the body parser's depth limit, or by validation), never a 500.
    const deep = {
      name: 'x',
      extra: nested(148, { x_token: 'deep-secret-150', password: 'deep-password-150', inner: nested(50, {}) }),
    };
    const refused = await admin.post('/v1/workspaces', deep);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ message: expect.any(String), code: expect.any(String) });
    const records = (await admin.get('/v1/audit-logs?resource_type=workspace&page_size=10')).body;
    expect(records.data[0]).toMatchObject({ action: 'create', response_status_code: 400 });
    const text = JSON.stringify(records);
    expect(text).not.toContain('deep-secret-150');
    expect(text).not.toContain('deep-password-150');
    expect(t.logLines.join('\n')).not.toContain('deep-secret');
  });
});

describe('secret fields of provider configuration', () => {
  // Known settings no Azure adapter reads: stored and shown like the ones it does.
  const secrets = {
    aws_secret_access_key: 'plain-aws-secret-1234',
    aws_session_token: 'plain-aws-session-5678',
  };

  it('are stored encrypted, never shown or audited, and still reach the provider', async () => {
    const g = await startGateway();
    const entra = await startTokenEndpoint();
    const configurations = {
      custom_host: g.mock.url,
      azure_deployment_name: 'dep',
      azure_api_version: '2024-10-21',
      azure_tenant_id: 'tenant-1',
      azure_client_id: 'client-1',
      azure_client_secret: 'plain-entra-secret-2468',
      azure_authority_host: entra.url,
      custom_headers: { 'x-upstream-auth': 'plain-header-secret-7890' },
      ...secrets,
    };
    const created = await g.admin.post('/v1/integrations', {
      name: 'Azure',
      slug: 'azure-free',
      ai_provider_id: 'azure-openai',
      key: 'azure-api-key-plain-0000',
      configurations,
    });
    expect(created.status).toBe(200);
    const plaintexts = [
      ...Object.values(secrets),
      'plain-entra-secret-2468',
      'plain-header-secret-7890',
      'azure-api-key-plain-0000',
    ];

    const shown = JSON.stringify([
      (await g.admin.get('/v1/integrations/azure-free')).body,
      (await g.admin.get('/v1/integrations')).body,
      (await g.admin.get('/v1/audit-logs')).body,
    ]);
    for (const plain of plaintexts) expect(shown).not.toContain(plain);
    const one = (await g.admin.get('/v1/integrations/azure-free')).body;
    expect(one.configurations).toMatchObject({
      aws_secret_access_key: 'plai****1234',
      aws_session_token: 'plai****5678',
      azure_client_secret: 'plai****2468',
      azure_deployment_name: 'dep',
    });

    // A PUT of the object as shown keeps the stored secrets.
    expect((await g.admin.put('/v1/integrations/azure-free', { configurations: one.configurations })).status).toBe(200);

    // The gateway decrypts them: the Entra client secret reaches the token endpoint, its token the provider.
    await g
      .openai({ 'x-service-provider': '@azure-free' }, { apiKey: 'unused' })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
    expect(entra.secrets).toEqual(['plain-entra-secret-2468']);
    expect(g.mock.requests.at(-1)!.headers.authorization).toBe('Bearer entra-token');
    // Fields no adapter reads reach the gateway's resolved credential in clear.
    const principal = { organisationId: g.server.bootstrap.organisationId, workspaceId: null } as never;
    const ws = await g.server.db
      .selectFrom('workspaces')
      .select('id')
      .where('slug', '=', 'default')
      .executeTakeFirstOrThrow();
    const resolved = await g.server.credentials.resolveProvider(principal, ws.id, 'azure-free');
    expect(resolved.configurations).toMatchObject({
      ...secrets,
      custom_headers: { 'x-upstream-auth': 'plain-header-secret-7890' },
    });

    const stored = await storedText(g);
    expect(stored).toContain('azure-free'); // the store is the right one
    for (const plain of plaintexts) expect(stored).not.toContain(plain);
    expect(g.logLines.join('\n')).not.toContain('plain-');
  });

  it('seals fields that an older version stored in clear, when the server starts, and masks them meanwhile', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    expect(
      (
        await admin.post('/v1/virtual-keys', {
          name: 'Old',
          slug: 'old-vk',
          provider: 'openai',
          key: 'sk-old-virtual-key-0000',
        })
      ).status,
    ).toBe(200);
    // As an older version wrote it: the field in clear.
    await t.server.db
      .updateTable('virtual_keys')
      .set({
        configurations: JSON.stringify({ azure_client_secret: 'legacy-clear-subscription-1', openai_project: 'p' }),
      })
      .where('slug', '=', 'old-vk')
      .execute();
    t.server.credentials.invalidateAll();
    const masked = (await admin.get('/v1/virtual-keys/old-vk')).body.configurations;
    expect(masked).toEqual({ azure_client_secret: 'lega****on-1', openai_project: 'p' });

    // A PUT back of what was shown keeps the real value (now sealed).
    expect((await admin.put('/v1/virtual-keys/old-vk', { configurations: masked })).status).toBe(200);
    const row = await t.server.db
      .selectFrom('virtual_keys')
      .select('configurations')
      .where('slug', '=', 'old-vk')
      .executeTakeFirstOrThrow();
    expect(row.configurations).not.toContain('legacy-clear-subscription-1');

    // Another row left in clear is sealed by the next start.
    await t.server.db
      .updateTable('virtual_keys')
      .set({ configurations: JSON.stringify({ api_token: 'legacy-clear-token-2' }) })
      .where('slug', '=', 'old-vk')
      .execute();
    await t.close();
    const again = await startTestServer({ dataDir: t.dataDir });
    const sealed = await again.server.db
      .selectFrom('virtual_keys')
      .select('configurations')
      .where('slug', '=', 'old-vk')
      .executeTakeFirstOrThrow();
    expect(sealed.configurations).not.toContain('legacy-clear-token-2');
    expect((await apiClient(again.baseUrl, t.adminKey).get('/v1/virtual-keys/old-vk')).body.configurations).toEqual({
      api_token: 'lega****en-2',
    });
  });
});
