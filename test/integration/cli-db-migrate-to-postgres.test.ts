import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { migrateToLatest, openDatabase } from '../../src/storage/database.js';
import { runCli } from '../helpers/cli.js';
import { createWorkspace } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startMockOpenAI, type MockOpenAI } from '../helpers/mock-openai-upstream.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { postgresAvailable } from '../helpers/services.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';

const hasPostgres = await postgresAvailable();
const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

/** A SQLite installation with a stored credential and `requests` gateway requests through it; stopped. */
async function sqliteInstallation(mock: MockOpenAI, requests: number) {
  const server = await startTestServer();
  const admin = apiClient(server.baseUrl, server.adminKey);
  const integration = await admin.post('/v1/integrations', {
    name: 'Mock OpenAI',
    slug: 'mock-openai',
    ai_provider_id: 'openai',
    key: 'sk-stored-secret',
    configurations: { custom_host: mock.baseUrl },
  });
  expect(integration.status).toBe(200);
  for (let i = 0; i < requests; i++)
    expect((await admin.post('/v1/chat/completions', chat, { 'x-service-provider': '@mock-openai' })).status).toBe(200);
  await server.server.requestLogs.flush();
  await server.close();
  const masterKey = readFileSync(join(server.dataDir, 'master.key'), 'utf8').trim();
  return { dataDir: server.dataDir, adminKey: server.adminKey, admin, masterKey };
}

const migrate = (from: string, to: string, extra: string[] = [], env: Record<string, string> = {}) =>
  runCli(['db', 'migrate-to-postgres', '--from', from, '--to', to, ...extra], env);

describe.skipIf(!hasPostgres)('svcgw db migrate-to-postgres', () => {
  it('moves a SQLite installation to PostgreSQL: the admin key, the history and the stored credentials keep working', async () => {
    const mock = await startMockOpenAI();
    onTestFinished(() => mock.close());
    const server = await startTestServer();
    const admin = apiClient(server.baseUrl, server.adminKey);
    const ws = await createWorkspace(admin, 'Team', 'team');
    const service = await admin.post('/v1/api-keys/organisation/service', { name: 'ci', scopes: ['workspaces.list'] });
    expect(service.status).toBe(200);
    expect(
      (
        await admin.post('/v1/configs', {
          name: 'Prod',
          slug: 'prod',
          config: { provider: '@mock-openai', override_params: { model: 'gpt-4o-mini' } },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await admin.post('/v1/integrations', {
          name: 'Mock OpenAI',
          slug: 'mock-openai',
          ai_provider_id: 'openai',
          key: 'sk-stored-secret',
          configurations: { custom_host: mock.baseUrl },
        })
      ).status,
    ).toBe(200);
    for (let i = 0; i < 6; i++)
      expect((await admin.post('/v1/chat/completions', chat, { 'x-service-provider': '@mock-openai' })).status).toBe(
        200,
      );
    await server.server.requestLogs.flush();
    // A finished log export: its file in <data_dir>/exports moves into the database.
    const exported = await admin.post('/v1/logs/exports', {
      workspace_id: 'default',
      filters: {},
      requested_data: ['id', 'ai_model'],
    });
    expect((await admin.post(`/v1/logs/exports/${exported.body.id}/start`)).status).toBe(200);
    await server.server.observability.exports.idle();
    expect((await admin.get(`/v1/logs/exports/${exported.body.id}`)).body.status).toBe('success');
    const auditBefore = (await admin.get('/v1/audit-logs?page_size=1')).body.total as number;
    await server.close();
    const masterKey = readFileSync(join(server.dataDir, 'master.key'), 'utf8').trim();
    const url = await createTestDatabase();

    const copied = await migrate(server.dataDir, url, ['--json']);
    expect(copied.code, copied.stderr).toBe(0);
    const report = JSON.parse(copied.stdout);
    expect(report.ok).toBe(true);
    const rows = Object.fromEntries(report.tables.map((t: any) => [t.table, t]));
    for (const t of report.tables.filter((t: any) => !t.skipped)) expect(t.postgresql).toBe(t.sqlite);
    expect(rows.request_logs).toMatchObject({ sqlite: 6, postgresql: 6 });
    expect(rows.integrations).toMatchObject({ sqlite: 1, postgresql: 1 });
    expect(rows.audit_logs.sqlite).toBe(auditBefore);
    expect(rows.analytics_rollups.postgresql).toBeGreaterThan(0);
    expect(rows.log_export_chunks).toMatchObject({
      sqlite: 1,
      postgresql: 1,
      from: expect.stringContaining('1 export file(s)'),
    });
    expect(rows.cache_entries).toMatchObject({
      postgresql: null,
      skipped: expect.stringContaining('each PostgreSQL instance keeps its own'),
    });
    // Parents before children.
    const order = report.tables.map((t: any) => t.table);
    expect(order.indexOf('organisations')).toBeLessThan(order.indexOf('workspaces'));
    expect(order.indexOf('integrations')).toBeLessThan(order.indexOf('providers'));
    expect(report.master_key).toMatchObject({ source: 'master.key', credentials_checked: 1 });
    expect(copied.stdout).not.toContain(masterKey);

    // Again: the target holds data now, and is left as it is unless --force.
    const again = await migrate(server.dataDir, url);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds svcgw data \(.*organisations: 1, .*request_logs: 6.*\); .*--force/);
    // Replaced, in batches of four rows.
    const forced = await migrate(server.dataDir, url, ['--force', '--batch-size', '4']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/^request_logs +6 +6$/m);
    expect(forced.stdout).toContain('every row count matches');
    expect(forced.stdout).toMatch(/Start every PostgreSQL instance with SVCGW_MASTER_KEY set to it/);
    expect(forced.stdout).not.toContain(masterKey);

    // A server on PostgreSQL with the same master key (and a data directory of its own).
    const pg = await startTestServer({ env: { SVCGW_DATABASE_URL: url, SVCGW_MASTER_KEY: masterKey } });
    expect(pg.server.bootstrap.created).toBe(false);
    const moved = apiClient(pg.baseUrl, server.adminKey);
    expect((await moved.get('/v1/workspaces/team')).body).toMatchObject({ id: ws.id, name: 'Team' });
    expect((await apiClient(pg.baseUrl, service.body.key).get('/v1/workspaces')).status).toBe(200);
    expect((await moved.get('/v1/configs/prod')).body.config.override_params).toEqual({ model: 'gpt-4o-mini' });
    expect((await moved.get('/v1/logs?page_size=100')).body.total).toBe(6);
    expect((await moved.get('/v1/analytics/summary')).body.summary).toMatchObject({ requests: 6, successes: 6 });
    const download = await fetch(`${pg.baseUrl}/v1/logs/exports/${exported.body.id}/download?format=jsonl`, {
      headers: { 'x-service-api-key': server.adminKey },
    });
    expect(download.status).toBe(200);
    expect((await download.text()).trim().split('\n')).toHaveLength(6);
    // The stored credential decrypts with the copied master key: the request reaches the provider with it.
    mock.reset();
    expect((await moved.post('/v1/chat/completions', chat, { 'x-service-provider': '@mock-openai' })).status).toBe(200);
    expect(mock.requests[0]!.headers.authorization).toBe('Bearer sk-stored-secret');
    // New rows follow the copied ones (the audit log's sequence moved past them).
    expect((await moved.post('/v1/workspaces', { name: 'After', slug: 'after' })).status).toBe(200);
    expect((await moved.get('/v1/audit-logs?page_size=1')).body.total).toBe(auditBefore + 1);
  });

  it('refuses a master key that does not decrypt the credentials, and rolls back a copy whose counts differ', async () => {
    const mock = await startMockOpenAI();
    onTestFinished(() => mock.close());
    const source = await sqliteInstallation(mock, 2);
    const url = await createTestDatabase();
    const otherKey = 'ab'.repeat(32);

    const wrongKey = await migrate(source.dataDir, url, [], { SVCGW_MASTER_KEY: otherKey });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/encrypted with a different master key .*Nothing was copied/);

    // Row counts are checked in the copy's own transaction: one that differs undoes all of it.
    const db = openDatabase({ data_dir: makeTempDir(), database_url: url });
    onTestFinished(() => db.destroy());
    await migrateToLatest(db);
    await sql`CREATE FUNCTION lose_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`.execute(db);
    await sql`CREATE TRIGGER lose_logs BEFORE INSERT ON request_logs FOR EACH ROW EXECUTE FUNCTION lose_row()`.execute(
      db,
    );
    const differs = await migrate(source.dataDir, url, ['--json'], { SVCGW_MASTER_KEY: source.masterKey });
    expect(differs.code).toBe(1);
    expect(differs.stderr).toContain('row counts differ in request_logs; nothing was copied');
    const report = JSON.parse(differs.stdout);
    expect(report.ok).toBe(false);
    expect(report.tables.find((t: any) => t.table === 'request_logs')).toMatchObject({ sqlite: 2, postgresql: 0 });
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM organisations`.execute(db);
    expect(rows[0]!.n).toBe(0);

    // A row PostgreSQL refuses stops the copy, naming the table; nothing stays behind.
    await sql`ALTER TABLE integrations ADD CONSTRAINT refuse_mock CHECK (slug <> 'mock-openai')`.execute(db);
    const rejected = await migrate(source.dataDir, url, [], { SVCGW_MASTER_KEY: source.masterKey });
    expect(rejected.code).toBe(1);
    expect(rejected.stderr).toMatch(/^svcgw: copying integrations failed, nothing was copied: .*refuse_mock/m);
    expect((await sql<{ n: number }>`SELECT count(*) AS n FROM organisations`.execute(db)).rows[0]!.n).toBe(0);

    // Without the key file or SVCGW_MASTER_KEY the credentials cannot be checked: refused.
    rmSync(join(source.dataDir, 'master.key'));
    const noKey = await migrate(source.dataDir, url);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/cannot find: set SVCGW_MASTER_KEY/);
  });

  it('answers usage errors with exit 2', async () => {
    const empty = makeTempDir();
    const notThere = await migrate(empty, 'postgres://postgres@127.0.0.1:5432/x');
    expect(notThere.code).toBe(2);
    expect(notThere.stderr).toContain(`no svcgw database in ${empty}`);
    const notPostgres = await migrate(empty, 'mysql://127.0.0.1/x');
    expect(notPostgres.code).toBe(2);
    expect(notPostgres.stderr).toContain('--to must be a postgres://');
    expect((await runCli(['db', 'migrate-to-postgres', '--from', empty])).code).toBe(2);
    const badBatch = await migrate(empty, 'postgres://postgres@127.0.0.1:5432/x', ['--batch-size', '0']);
    expect(badBatch.code).toBe(2);
    expect(badBatch.stderr).toContain('must be a whole number of at least 1');
  });
});
