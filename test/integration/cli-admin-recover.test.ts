import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { runCli } from '../helpers/cli.js';
import { apiClient } from '../helpers/http.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';

describe('svcgw admin recover', () => {
  it('issues a new owner key into the data directory of a running server, which accepts it at once; the audit log shows it', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const keyId = (
      await t.server.db
        .selectFrom('api_keys')
        .select('id')
        .where('creation_mode', '=', 'auto')
        .executeTakeFirstOrThrow()
    ).id;

    // The operator let the only admin key expire: nobody can administer any more.
    expect((await admin.put(`/v1/api-keys/${keyId}`, { expires_at: '2026-03-01T01:00:00Z' })).status).toBe(200);
    clock.advance(2 * 3600_000);
    expect((await admin.get('/v1/workspaces')).status).toBe(401);

    const res = await runCli(['admin', 'recover', '--data-dir', t.dataDir, '--json']);
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout) as { admin_api_key: string; api_key_id: string; user_id: string };
    expect(out.admin_api_key).toMatch(/^svc-/);
    expect(res.stderr).not.toContain(out.admin_api_key);

    const recovered = apiClient(t.baseUrl, out.admin_api_key);
    expect((await recovered.get('/v1/workspaces')).status).toBe(200);
    const key = await recovered.get(`/v1/api-keys/${out.api_key_id}`);
    expect(key.body).toMatchObject({ type: 'organisation-service', user_id: out.user_id, status: 'active' });
    expect((await recovered.get(`/v1/users/${out.user_id}`)).body.role).toBe('owner');

    const audit = await recovered.get('/v1/audit-logs?action=recover');
    expect(audit.status).toBe(200);
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({
      user_type: 'system',
      action: 'recover',
      resource_type: 'api_key',
      resource_id: out.api_key_id,
    });
    expect(JSON.stringify(audit.body.data[0])).not.toContain(out.admin_api_key);

    // The recovered key can mend things: the old key gets a later expiry and works again.
    expect((await recovered.put(`/v1/api-keys/${keyId}`, { expires_at: null })).status).toBe(200);
    expect((await admin.get('/v1/workspaces')).status).toBe(200);
  });

  it('prints the key once on a terminal-style run, and refuses a directory without a database (exit 2)', async () => {
    const t = await startTestServer();
    const text = await runCli(['admin', 'recover', '--data-dir', t.dataDir]);
    expect(text.code, text.stderr).toBe(0);
    const raw = /svc-[A-Za-z0-9_-]{43}/.exec(text.stdout)?.[0];
    expect(raw).toBeDefined();
    expect((await apiClient(t.baseUrl, raw).get('/v1/workspaces')).status).toBe(200);

    const empty = makeTempDir();
    const missing = await runCli(['admin', 'recover', '--data-dir', empty]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no svcgw database in .*--data-dir/);
  });
});
