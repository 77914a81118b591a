import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createManualClock, type Clock } from '../../src/lib/clock.js';
import type { Change } from '../../src/storage/change-bus.js';
import { createMemoryTransport, type MailTransport } from '../../src/notifications/transport.js';
import { jobLockSql } from '../../src/storage/job-lock.js';
import { REFUSED_TOPOLOGY } from '../../src/server/instance-bus.js';
import { runCli } from '../helpers/cli.js';
import { addUser, createWorkspace } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import { createTestDatabase, sharedInstancesEnv } from '../helpers/postgres.js';
import { postgresAvailable, redisAvailable } from '../helpers/services.js';
import { makeTempDir, startTestServer, type TestServer } from '../helpers/start-test-server.js';

const hasServices = (await postgresAvailable()) && (await redisAvailable());
const ADMIN_KEY = `scale-test-${'s'.repeat(32)}`;
const DAY_MS = 24 * 60 * 60 * 1000;

async function instances(count: number, options: { clock?: Clock; mailTransport?: MailTransport } = {}) {
  const env = await sharedInstancesEnv({ SVCGW_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY });
  const servers: TestServer[] = [];
  for (let i = 0; i < count; i++) servers.push(await startTestServer({ env, ...options }));
  return { env, servers, admins: servers.map((s) => apiClient(s.baseUrl, ADMIN_KEY)) };
}

/** The next change `server` hears that `match` accepts; fails after a bounded wait, not on its duration. */
function nextChange(server: TestServer, match: (change: Change) => boolean): Promise<Change> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error('the change did not reach the instance within 5 s'));
    }, 5_000);
    const off = server.server.changes.on((change) => {
      if (!match(change)) return;
      clearTimeout(timer);
      off();
      resolve(change);
    });
  });
}

describe.skipIf(!hasServices)('several instances on PostgreSQL and Redis', () => {
  it('a key revoked on one instance is refused by the others at once, not after their cache time-out', async () => {
    const { servers, admins } = await instances(3);
    const [a, b, c] = servers as [TestServer, TestServer, TestServer];
    const key = await admins[0]!.post('/v1/api-keys/organisation/service', { name: 'ci', scopes: ['workspaces.list'] });
    const onB = apiClient(b.baseUrl, key.body.key);
    const onC = apiClient(c.baseUrl, key.body.key);
    // B and C verify the key and keep it for key_cache_ttl_ms (60 s by default).
    expect((await onB.get('/v1/workspaces')).status).toBe(200);
    expect((await onC.get('/v1/workspaces')).status).toBe(200);

    const heard = Promise.all(
      [b, c].map((server) => nextChange(server, (ch) => ch.topic === 'key' && ch.id === key.body.id)),
    );
    expect((await admins[0]!.delete(`/v1/api-keys/${key.body.id}`)).status).toBe(200);
    await heard;
    expect((await onB.get('/v1/workspaces')).status).toBe(401);
    expect((await onC.get('/v1/workspaces')).status).toBe(401);
    expect((await apiClient(a.baseUrl, key.body.key).get('/v1/workspaces')).status).toBe(401);
  });

  it('a config changed on one instance routes the next request on another by the new version', async () => {
    const { servers, admins } = await instances(2);
    const [, b] = servers as [TestServer, TestServer];
    const mock = await startMockOpenAI();
    onTestFinished(() => mock.close());
    const config = (model: string) => ({ provider: 'openai', custom_host: mock.baseUrl, override_params: { model } });
    expect((await admins[0]!.post('/v1/configs', { name: 'Prod', slug: 'prod', config: config('first') })).status).toBe(
      200,
    );
    const call = () =>
      fetch(`${b.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'x-service-api-key': ADMIN_KEY,
          'x-service-config': 'prod',
          authorization: 'Bearer provider-key',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await call()).status).toBe(200);
    const heard = nextChange(b, (ch) => ch.topic === 'configs');
    expect((await admins[0]!.put('/v1/configs/prod', { config: config('second') })).status).toBe(200);
    await heard;
    expect((await call()).status).toBe(200);
    expect(mock.requests.map((r) => (r.json as { model: string }).model)).toEqual(['first', 'second']);
  });

  it('runs a scheduled job on one instance at a time; a job left by a dead instance is done by the next run', async () => {
    const clock = createManualClock();
    const { env, servers, admins } = await instances(2, { clock });
    const [a, b] = servers as [TestServer, TestServer];
    const expiresAt = new Date(clock.now() + 10 * DAY_MS).toISOString();
    const key = await admins[0]!.post('/v1/api-keys/organisation/service', {
      name: 'short-lived',
      scopes: ['workspaces.list'],
      expires_at: expiresAt,
    });
    expect(key.status).toBe(200);
    const runBoth = () => Promise.all([a, b].map((s) => s.server.keyLifecycle.runOnce()));

    // Eight days on, the 7-day warning is due: both instances run, one notice is written.
    clock.advance(8 * DAY_MS);
    // (Their 30 s timers may run too: what counts is what the database holds.)
    await runBoth();
    const notices = await a.server.db.selectFrom('notifications').select('kind').execute();
    expect(notices).toEqual([{ kind: 'api_key.expiring' }]);

    // Past the expiry, while an instance is mid-run (it holds the job's lock): the others skip.
    clock.advance(3 * DAY_MS);
    const url = env.SVCGW_DATABASE_URL!;
    const dying = new pg.Client({ connectionString: url });
    await dying.connect();
    await dying.query(jobLockSql('key-lifecycle'));
    expect(await a.server.keyLifecycle.runOnce()).toMatchObject({ expired: 0, skipped: true });
    expect((await apiClient(b.baseUrl, ADMIN_KEY).get(`/v1/api-keys/${key.body.id}`)).body.status).toBe('active');
    // It dies: its connection closes and the lock with it; the next run, anywhere, does the work once.
    await dying.end();
    await runBoth();
    expect((await admins[1]!.get(`/v1/api-keys/${key.body.id}`)).body.status).toBe('expired');
  });

  it('sends one e-mail per alert however many instances deliver at once', async () => {
    const mail = createMemoryTransport();
    const { servers } = await instances(3, { mailTransport: mail });
    const organisationId = (
      await servers[0]!.server.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow()
    ).id;
    for (let i = 0; i < 5; i++)
      await servers[i % 3]!.server.notifications.outbox.enqueue({
        organisationId,
        kind: 'usage_limit.exhausted',
        dedupeKey: `test:${i}`,
        subject: `alert ${i}`,
        text: 'spent',
        recipients: ['ops@example.test'],
      });
    // Every instance runs its delivery at once, several times over (their timers may run too).
    await Promise.all(Array.from({ length: 9 }, (_, i) => servers[i % 3]!.server.notifications.worker!.runOnce()));
    expect(mail.sent.map((m) => m.subject).sort()).toEqual(['alert 0', 'alert 1', 'alert 2', 'alert 3', 'alert 4']);
  });

  it('refuses a second instance when limits would be counted per instance, naming the fix', async () => {
    const url = await createTestDatabase();
    await startTestServer({ env: { SVCGW_DATABASE_URL: url } });
    const second = await runCli(['serve', '--port', '0', '--data-dir', makeTempDir()], { SVCGW_DATABASE_URL: url });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`svcgw: ${REFUSED_TOPOLOGY.exclusive}`);
    // An instance with Redis cannot join one that counts in its own process either.
    await expect(
      startTestServer({ env: { SVCGW_DATABASE_URL: url, SVCGW_REDIS_URL: 'redis://127.0.0.1:6379' } }),
    ).rejects.toThrow(REFUSED_TOPOLOGY.shared);
  });

  it('answers 409 naming the field when racing creates on several instances collide in the database', async () => {
    const { servers, admins } = await instances(2);
    const ws = await createWorkspace(admins[0]!, 'Team', 'team');
    const organisationId = (
      await servers[0]!.server.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow()
    ).id;
    const userId = await addUser(servers[0]!.server.db, organisationId, 'member');
    const racing = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        admins[i % 2]!.post(`/v1/workspaces/${ws.slug}/members`, { users: [{ id: userId, role: 'member' }] }),
      ),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([200, ...Array<number>(11).fill(409)]);
    for (const refused of racing.filter((r) => r.status === 409))
      expect(refused.body.error).toMatchObject({ code: 'CONFLICT', type: expect.any(String) });
    const members = await admins[1]!.get(`/v1/workspaces/${ws.slug}/members`);
    expect(members.body.data.filter((m: any) => m.id === userId || m.user_id === userId)).toHaveLength(1);
  });

  it('after losing its notification connection an instance reconnects and clears its caches', async () => {
    const { env, servers, admins } = await instances(2);
    const [, b] = servers as [TestServer, TestServer];
    const key = await admins[0]!.post('/v1/api-keys/organisation/service', { name: 'ci', scopes: ['workspaces.list'] });
    const onB = apiClient(b.baseUrl, key.body.key);
    expect((await onB.get('/v1/workspaces')).status).toBe(200);
    const resumed = nextChange(b, (ch) => ch.topic === 'all');
    const killer = new pg.Client({ connectionString: env.SVCGW_DATABASE_URL! });
    await killer.connect();
    onTestFinished(() => killer.end());
    // Cut B's listening connection, and revoke the key while it is gone (B misses that notification).
    const pid = b.server.changes.listenerPid();
    expect(pid).not.toBeNull();
    await killer.query('select pg_terminate_backend($1)', [pid]);
    await b.server.db.updateTable('api_keys').set({ status: 'revoked' }).where('id', '=', key.body.id).execute();
    await resumed;
    expect((await onB.get('/v1/workspaces')).status).toBe(401);
  });

  it('a log export written by one instance downloads through another, as JSONL and CSV', async () => {
    const { servers, admins } = await instances(2);
    const [a, b] = servers as [TestServer, TestServer];
    const mock = await startMockOpenAI();
    onTestFinished(() => mock.close());
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${a.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'x-service-api-key': ADMIN_KEY,
          'x-service-provider': 'openai',
          'x-service-custom-host': mock.baseUrl,
          authorization: 'Bearer provider-key',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: `model-${i}`, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
    }
    await a.server.requestLogs.flush();
    const created = await admins[0]!.post('/v1/logs/exports', {
      workspace_id: 'default',
      filters: {},
      requested_data: ['id', 'ai_model'],
    });
    expect(created.status).toBe(200);
    expect(created.body.total).toBe(3);
    const id = created.body.id as string;
    expect((await admins[0]!.post(`/v1/logs/exports/${id}/start`)).status).toBe(200);
    for (let i = 0; i < 200 && (await admins[1]!.get(`/v1/logs/exports/${id}`)).body.status === 'in_progress'; i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect((await admins[1]!.get(`/v1/logs/exports/${id}`)).body.status).toBe('success');

    const download = (format: string) =>
      fetch(`${b.baseUrl}/v1/logs/exports/${id}/download?format=${format}`, {
        headers: { 'x-service-api-key': ADMIN_KEY },
      });
    const jsonl = await download('jsonl');
    expect(jsonl.status).toBe(200);
    const models = (await jsonl.text())
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { ai_model: string }).ai_model);
    expect(models.sort()).toEqual(['model-0', 'model-1', 'model-2']);
    const csv = await (await download('csv')).text();
    expect(csv.trim().split('\n')).toHaveLength(4);

    // Deleted with the export's draft reset: nothing of the file is left for the next download.
    expect((await admins[1]!.put(`/v1/logs/exports/${id}`, { filters: {}, description: 'again' })).status).toBe(200);
    const rows = await b.server.db.selectFrom('log_export_chunks').select('seq').where('export_id', '=', id).execute();
    expect(rows).toEqual([]);
  });
});
