import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;

describe('API key expiry (lifecycle worker)', () => {
  it('warns 7 days and 1 day ahead once each, marks the key expired, and a later expiry brings it back', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/api-keys/organisation/service', {
      name: 'temp',
      scopes: ['workspaces.list'],
      expires_at: '2026-03-11T00:00:00Z',
    });
    // Too short-lived for any warning: created inside both windows.
    const brief = await admin.post('/v1/api-keys/organisation/service', {
      name: 'brief',
      scopes: ['workspaces.list'],
      expires_at: '2026-03-01T02:00:00Z',
    });
    const key = apiClient(t.baseUrl, created.body.key);
    expect((await key.get('/v1/workspaces')).status).toBe(200);
    const worker = t.server.keyLifecycle;
    const expiring = () =>
      t.server.db
        .selectFrom('notifications')
        .selectAll()
        .where('kind', '=', 'api_key.expiring')
        .orderBy('created_at')
        .execute();

    expect(await worker.runOnce()).toEqual({ expired: 0, rotated: 0, notices: 0 });
    clock.set(Date.parse('2026-03-04T00:00:00Z'));
    expect((await worker.runOnce()).notices).toBe(1);
    expect((await worker.runOnce()).notices).toBe(0);
    clock.set(Date.parse('2026-03-10T00:00:00Z'));
    await worker.runOnce();
    await worker.runOnce();
    const warnings = await expiring();
    expect(warnings.map((n) => n.dedupe_key)).toEqual([
      `api_key.expiring:${created.body.id}:2026-03-11T00:00:00.000Z:7d`,
      `api_key.expiring:${created.body.id}:2026-03-11T00:00:00.000Z:1d`,
    ]);
    expect(warnings[0]).toMatchObject({ status: 'pending', recipients: JSON.stringify(['owner@svcgw.local']) });
    expect(warnings[0]!.subject).toContain('2026-03-11T00:00:00.000Z');

    clock.set(Date.parse('2026-03-11T00:00:01Z'));
    const run = await worker.runOnce();
    expect(run.expired).toBe(1);
    const shown = await admin.get(`/v1/api-keys/${created.body.id}`);
    expect(shown.body.status).toBe('expired');
    const refused = await key.get('/v1/workspaces');
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/expired/);
    expect((await admin.get(`/v1/api-keys/${brief.body.id}`)).body.status).toBe('expired');
    expect(await expiring()).toHaveLength(2);
    expect((await worker.runOnce()).expired).toBe(0);

    // An expired key cannot be rotated; extending its expiry makes it active again.
    expect((await admin.post(`/v1/api-keys/${created.body.id}/rotate`, {})).status).toBe(400);
    expect((await admin.put(`/v1/api-keys/${created.body.id}`, { expires_at: '2026-06-01T00:00:00Z' })).status).toBe(
      200,
    );
    expect((await admin.get(`/v1/api-keys/${created.body.id}`)).body.status).toBe('active');
    expect((await key.get('/v1/workspaces')).status).toBe(200);
  });

  it('marks keys that expired while the server was down at the next start', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const t1 = await startTestServer({ clock });
    const admin = apiClient(t1.baseUrl, t1.adminKey);
    const created = await admin.post('/v1/api-keys/organisation/service', {
      name: 'temp',
      scopes: ['workspaces.list'],
      expires_at: '2026-03-02T00:00:00Z',
    });
    await t1.close();
    clock.advance(2 * DAY);
    const t2 = await startTestServer({ clock, dataDir: t1.dataDir });
    await t2.server.keyLifecycle.runOnce();
    const row = await t2.server.db
      .selectFrom('api_keys')
      .select('status')
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('expired');
    expect((await apiClient(t2.baseUrl, created.body.key).get('/v1/workspaces')).status).toBe(401);
  });
});
