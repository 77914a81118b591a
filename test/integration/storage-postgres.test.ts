import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  CACHE_DATABASE_FILE,
  DATABASE_FILE,
  engineOf,
  migrateToLatest,
  openDatabase,
  type Db,
} from '../../src/storage/database.js';
import {
  beginRequestTransaction,
  commitWith,
  runInRequestTransaction,
  undoWith,
} from '../../src/storage/request-transaction.js';
import { runCli } from '../helpers/cli.js';
import { createWorkspace, validPolicy } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import { createTestDatabase, sharedInstancesEnv } from '../helpers/postgres.js';
import { postgresAvailable, redisAvailable } from '../helpers/services.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';

const hasPostgres = await postgresAvailable();
// Several instances on one database count limits in Redis (without it the second one refuses to start).
const hasRedis = await redisAvailable();
const ADMIN_KEY = `pg-test-${'p'.repeat(32)}`;

/** Two instances on one PostgreSQL database and one Redis, each with a data directory of its own. */
async function twoInstances() {
  const env = await sharedInstancesEnv({ SVCGW_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY });
  const a = await startTestServer({ env });
  const b = await startTestServer({ env });
  return { env, a, b, adminA: apiClient(a.baseUrl, ADMIN_KEY), adminB: apiClient(b.baseUrl, ADMIN_KEY) };
}

async function openMigrated(): Promise<Db> {
  const db = openDatabase({ data_dir: makeTempDir(), database_url: await createTestDatabase() });
  onTestFinished(() => db.destroy());
  await migrateToLatest(db);
  return db;
}

const now = new Date(0).toISOString();
const org = (id: string) => ({ id, name: id, created_at: now, last_updated_at: now });
const names = async (db: Db) =>
  (await db.selectFrom('organisations').select('id').orderBy('id').execute()).map((r) => r.id);

describe.skipIf(!hasPostgres || !hasRedis)('svcgw on PostgreSQL', () => {
  it('keeps the control plane in PostgreSQL, shared by two instances, with every change audited', async () => {
    const { env, a, b, adminA, adminB } = await twoInstances();
    expect(engineOf(a.server.db)).toBe('postgres');
    // Nothing of the control plane on the local disk; only this instance's response cache.
    expect(existsSync(join(a.dataDir, DATABASE_FILE))).toBe(false);
    expect(existsSync(join(a.dataDir, CACHE_DATABASE_FILE))).toBe(true);
    expect(b.server.bootstrap.created).toBe(false);

    const ws = await createWorkspace(adminA, 'Team PG', 'team-pg');
    expect((await adminB.get('/v1/workspaces/team-pg')).body).toMatchObject({ id: ws.id, name: 'Team PG' });

    const key = await adminA.post('/v1/api-keys/organisation/service', { name: 'ci', scopes: ['workspaces.list'] });
    expect(key.status).toBe(200);
    expect((await apiClient(b.baseUrl, key.body.key).get('/v1/workspaces')).status).toBe(200);

    const config = { provider: '@openai-prod', override_params: { model: 'gpt-4o-mini' } };
    expect((await adminB.post('/v1/configs', { name: 'Prod', slug: 'prod', config })).status).toBe(200);
    const changed = { ...config, override_params: { model: 'o3' } };
    expect((await adminA.put('/v1/configs/prod', { config: changed })).status).toBe(200);
    expect((await adminB.get('/v1/configs/prod')).body.config).toEqual(changed);
    expect((await adminB.get('/v1/configs/prod/versions')).body.data.map((v: any) => v.version)).toEqual([2, 1]);

    const policy = await adminA.post('/v1/policies/rate-limits', validPolicy({ workspace_id: 'team-pg', value: 7 }));
    expect(policy.status).toBe(200);
    expect((await adminB.get(`/v1/policies/rate-limits/${policy.body.id}`)).body).toMatchObject({ value: 7 });

    expect((await adminB.delete(`/v1/api-keys/${key.body.id}`)).status).toBe(200);
    // Revoked on B: refused there, and by an instance that never saw the key.
    expect((await apiClient(b.baseUrl, key.body.key).get('/v1/workspaces')).status).toBe(401);
    const c = await startTestServer({ env });
    expect((await apiClient(c.baseUrl, key.body.key).get('/v1/workspaces')).status).toBe(401);

    const audit = (await adminA.get('/v1/audit-logs?page_size=100')).body.data;
    expect(audit.map((r: any) => `${r.action} ${r.resource_type} ${r.response_status_code}`).sort()).toEqual(
      [
        'create workspace 200',
        'create api_key 200',
        'create config 200',
        'update config 200',
        'create rate_limits_policy 200',
        'delete api_key 200',
      ].sort(),
    );
  });

  it('undoes refused and dry-run mutations, and lets one of many racing instances take a slug', async () => {
    const { a, adminA, adminB } = await twoInstances();
    // Twelve creations of one slug at once, half on each instance: one wins, the others are refused and audited.
    const racing = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? adminA : adminB).post('/v1/workspaces', { name: `W${i}`, slug: 'same' }),
      ),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([200, ...Array<number>(11).fill(409)]);
    const created = await adminA.get('/v1/audit-logs?action=create&resource_type=workspace&page_size=100');
    expect(created.body.data.map((r: any) => r.response_status_code).sort()).toEqual([
      200,
      ...Array<number>(11).fill(409),
    ]);
    const rows = await a.server.db.selectFrom('workspaces').select('slug').where('slug', '=', 'same').execute();
    expect(rows).toHaveLength(1);

    const dry = await adminB.post('/v1/workspaces', { name: 'Dry', slug: 'dry' }, { 'x-service-dry-run': 'true' });
    expect(dry.status).toBe(200);
    expect((await adminA.get('/v1/workspaces/dry')).status).toBe(404);
    const sequence = await adminA.post('/v1/dry-run', {
      requests: [
        { method: 'POST', path: '/v1/workspaces', body: { name: 'Seq', slug: 'seq' } },
        { method: 'POST', path: '/v1/workspaces', body: { name: 'Seq again', slug: 'seq' } },
      ],
    });
    expect(sequence.body).toMatchObject({ ok: false, results: [{ status: 200 }, { status: 409 }] });
    expect((await adminB.get('/v1/workspaces/seq')).status).toBe(404);
    expect((await adminA.get('/v1/audit-logs?page_size=100')).body.total).toBe(12);
  });

  it('logs every gateway request of both instances once, and counts them in analytics', async () => {
    const { adminA, adminB, a, b } = await twoInstances();
    const mock = await startMockOpenAI();
    onTestFinished(() => mock.close());
    const headers = {
      'x-service-api-key': ADMIN_KEY,
      'x-service-provider': 'openai',
      'x-service-custom-host': mock.baseUrl,
      authorization: 'Bearer provider-key',
      'content-type': 'application/json',
    };
    const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).baseUrl}/v1/chat/completions`, { method: 'POST', headers, body }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array<number>(30).fill(200));
    await Promise.all([a.server.requestLogs.flush(), b.server.requestLogs.flush()]);

    const logs = await adminB.get('/v1/logs?page_size=100');
    expect(logs.body.total).toBe(30);
    expect(new Set(logs.body.data.map((l: any) => l.request_id)).size).toBe(30);
    for (const admin of [adminA, adminB]) {
      const summary = (await admin.get('/v1/analytics/summary')).body.summary;
      expect(summary).toMatchObject({ requests: 30, successes: 30, errors: 0 });
      expect(summary.p50_latency).toEqual(expect.any(Number));
    }
  });

  it('runs an audited request in a transaction of its own: committed with its record, or undone', async () => {
    const db = await openMigrated();
    const committed = await beginRequestTransaction(db);
    await runInRequestTransaction(committed, async () => {
      await db.insertInto('organisations').values(org('a-change')).execute();
      // A failed nested transaction undoes only its own writes.
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.insertInto('organisations').values(org('x-nested')).execute();
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
    });
    // Not visible outside until committed.
    expect(await names(db)).toEqual([]);
    await commitWith(committed, (conn) => conn.insertInto('organisations').values(org('b-record')).execute());
    expect(await names(db)).toEqual(['a-change', 'b-record']);

    const failing = await beginRequestTransaction(db);
    await runInRequestTransaction(failing, () => db.insertInto('organisations').values(org('c-change')).execute());
    // The record breaks a unique key: the change goes with it.
    await expect(
      commitWith(failing, (conn) => conn.insertInto('organisations').values(org('a-change')).execute()),
    ).rejects.toThrow(/duplicate key/);
    expect(await names(db)).toEqual(['a-change', 'b-record']);

    const refused = await beginRequestTransaction(db);
    await runInRequestTransaction(refused, async () => {
      await db.insertInto('organisations').values(org('d-half-done')).execute();
      // A statement that fails leaves the PostgreSQL transaction aborted; the refusal still records.
      await expect(db.insertInto('organisations').values(org('a-change')).execute()).rejects.toThrow(/duplicate key/);
    });
    await undoWith(refused, (conn) => conn.insertInto('organisations').values(org('e-refusal')).execute());
    expect(await names(db)).toEqual(['a-change', 'b-record', 'e-refusal']);
  });

  it('svcgw serve refuses a database migrated by a newer version, naming the migrations', async () => {
    const db = await openMigrated();
    await sql`insert into kysely_migration (name, timestamp) values ('9999-next', '2030-01-01T00:00:00.000Z')`.execute(
      db,
    );
    const { rows } = await sql<{ db: string }>`select current_database() as db`.execute(db);
    const url = `postgres://postgres@127.0.0.1:5432/${rows[0]!.db}`;
    const result = await runCli(['serve', '--port', '0', '--data-dir', makeTempDir()], { SVCGW_DATABASE_URL: url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'svcgw: the database was migrated by a newer svcgw (migrations 9999-next are unknown to this version)',
    );
  });

  it('turns JIT compilation off on its connections, unless the URL says otherwise', async () => {
    const jitOf = async (url: string) => {
      const db = openDatabase({ data_dir: makeTempDir(), database_url: url });
      onTestFinished(() => db.destroy());
      return (await sql<{ jit: string }>`show jit`.execute(db)).rows[0]?.jit;
    };
    const url = await createTestDatabase();
    expect(await jitOf(url)).toBe('off');
    const own = new URL(url);
    own.searchParams.set('options', '-c jit=on');
    expect(await jitOf(own.toString())).toBe('on');
  });
});
