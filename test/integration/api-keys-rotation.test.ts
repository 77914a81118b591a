import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import type { Db } from '../../src/storage/database.js';
import { addUser, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const notices = (db: Db, kind: string) =>
  db.selectFrom('notifications').selectAll().where('kind', '=', kind).orderBy('created_at').execute();

describe('POST /v1/api-keys/:apiKeyId/rotate', () => {
  it('keeps the old key valid during the transition and refuses it afterwards', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/api-keys/organisation/service', { name: 'ci', scopes: ['workspaces.list'] });
    const oldKey = apiClient(t.baseUrl, created.body.key);
    expect((await oldKey.get('/v1/workspaces')).status).toBe(200); // cached before the rotation

    const rotated = await admin.post(`/v1/api-keys/${created.body.id}/rotate`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({
      id: created.body.id,
      key: expect.stringMatching(/^svc-/),
      key_transition_expires_at: '2026-03-01T00:30:00.000Z',
      object: 'api-key',
    });
    expect(rotated.body.key).not.toBe(created.body.key);
    const newKey = apiClient(t.baseUrl, rotated.body.key);
    expect((await oldKey.get('/v1/workspaces')).status).toBe(200);
    expect((await newKey.get('/v1/workspaces')).status).toBe(200);

    const shown = await admin.get(`/v1/api-keys/${created.body.id}`);
    expect(shown.body).toMatchObject({
      id: created.body.id,
      scopes: ['workspaces.list'],
      key_transition_expires_at: '2026-03-01T00:30:00.000Z',
      new_key_pending_since: null,
      rotation_policy: null,
    });
    expect(shown.body.key).toBe(`${rotated.body.key.slice(0, 8)}****${rotated.body.key.slice(-4)}`);

    clock.advance(30 * MINUTE);
    const refused = await oldKey.get('/v1/workspaces');
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_API_KEY' });
    expect(refused.body.error.message).toMatch(/rotated/);
    expect((await newKey.get('/v1/workspaces')).status).toBe(200);
    expect((await admin.get(`/v1/api-keys/${created.body.id}`)).body.key_transition_expires_at).toBeNull();
  });

  it('keeps only the latest previous secret when rotated again during a transition', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/api-keys/organisation/service', { name: 'ci', scopes: ['workspaces.list'] });
    const first = await admin.post(`/v1/api-keys/${created.body.id}/rotate`, { key_transition_period_ms: 2 * HOUR });
    expect(first.body.key_transition_expires_at).toBe('2026-03-01T02:00:00.000Z');
    await t.server.keyLifecycle.runOnce();

    clock.advance(10 * MINUTE);
    const second = await admin.post(`/v1/api-keys/${created.body.id}/rotate`);
    expect(second.status).toBe(200);
    expect(second.body.key_transition_expires_at).toBe('2026-03-01T00:40:00.000Z');
    await t.server.keyLifecycle.runOnce();

    const original = await apiClient(t.baseUrl, created.body.key).get('/v1/workspaces');
    expect(original.status).toBe(401);
    expect(original.body.error.message).toMatch(/not valid/);
    expect((await apiClient(t.baseUrl, first.body.key).get('/v1/workspaces')).status).toBe(200);
    expect((await apiClient(t.baseUrl, second.body.key).get('/v1/workspaces')).status).toBe(200);

    // One notice per rotation, however often the worker runs.
    await t.server.keyLifecycle.runOnce();
    const rotatedNotices = await notices(t.server.db, 'api_key.rotated');
    expect(rotatedNotices.map((n) => n.dedupe_key)).toEqual([
      `api_key.rotated:${created.body.id}:2026-03-01T00:00:00.000Z`,
      `api_key.rotated:${created.body.id}:2026-03-01T00:10:00.000Z`,
    ]);
    expect(JSON.parse(rotatedNotices[0]!.recipients)).toEqual(['owner@svcgw.local']);
    for (const notice of rotatedNotices) {
      for (const raw of [created.body.key, first.body.key, second.body.key])
        expect(notice.body_text).not.toContain(raw);
    }

    // Audited without the new secret.
    const audits = await t.server.db.selectFrom('audit_logs').selectAll().where('action', '=', 'rotate').execute();
    expect(audits).toHaveLength(2);
    expect(audits[0]).toMatchObject({
      resource_type: 'api_key',
      resource_id: created.body.id,
      response_status_code: 200,
    });
    expect(JSON.stringify(audits)).not.toContain(first.body.key);
    expect(JSON.stringify(audits)).not.toContain(second.body.key);
    expect(t.logLines.join('\n')).not.toContain(second.body.key);
  });

  it('validates the body and follows the update permission rules', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const orgId = t.server.bootstrap.organisationId;
    const created = await admin.post('/v1/api-keys/organisation/service', { name: 'ci', scopes: ['workspaces.list'] });
    const rotate = (body: unknown) => admin.post(`/v1/api-keys/${created.body.id}/rotate`, body);

    for (const [body, param] of [
      [{ key_transition_period_ms: 1_799_999 }, 'key_transition_period_ms'],
      [{ key_transition_period_ms: 1_800_000.5 }, 'key_transition_period_ms'],
      [{ key_transition_period_ms: '1800000' }, 'key_transition_period_ms'],
      [{ transition: 1_800_000 }, 'body'],
    ] as const) {
      const res = await rotate(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', param });
    }
    expect((await rotate({ key_transition_period_ms: 1_800_000 })).status).toBe(200);
    expect((await admin.post('/v1/api-keys/00000000-0000-4000-8000-000000000000/rotate', {})).status).toBe(404);

    // A member rotates their own workspace key, not somebody else's; workspace keys never rotate admin keys.
    const memberId = await addUser(t.server.db, orgId, 'member', [
      { workspaceId: t.server.bootstrap.workspaceId, role: 'member' },
    ]);
    const scopes = ['workspace_user_api_keys.update', 'completions.write'];
    const mine = await createWorkspaceKey(admin, { workspace_id: 'default', user_id: memberId, scopes });
    const others = await createWorkspaceKey(admin, { workspace_id: 'default', scopes });
    const member = apiClient(t.baseUrl, mine.key);
    expect((await member.post(`/v1/api-keys/${others.id}/rotate`, {})).body.error.code).toBe('ROLE_NOT_ALLOWED');
    expect((await member.post(`/v1/api-keys/${created.body.id}/rotate`, {})).body.error.code).toBe(
      'WORKSPACE_FORBIDDEN',
    );
    const own = await member.post(`/v1/api-keys/${mine.id}/rotate`, {});
    expect(own.status).toBe(200);
    expect((await apiClient(t.baseUrl, own.body.key).post(`/v1/api-keys/${mine.id}/rotate`, {})).status).toBe(200);

    expect((await admin.delete(`/v1/api-keys/${created.body.id}`)).status).toBe(200);
    expect((await rotate({})).status).toBe(404);
  });
});

describe('rotation_policy', () => {
  it('rejects invalid policies, naming the field', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const cases: Array<[unknown, string]> = [
      [{ rotation_period: 'weekly', next_rotation_at: '2026-04-01T00:00:00Z' }, 'rotation_policy.next_rotation_at'],
      [{}, 'rotation_policy.rotation_period'],
      [{ rotation_period: null, next_rotation_at: null }, 'rotation_policy.rotation_period'],
      [{ key_transition_period_ms: 3_600_000 }, 'rotation_policy.rotation_period'],
      [{ rotation_period: 'daily' }, 'rotation_policy.rotation_period'],
      [{ rotation_period: 'weekly', key_transition_period_ms: 7 * DAY }, 'rotation_policy.key_transition_period_ms'],
      [{ rotation_period: 'monthly', key_transition_period_ms: 60_000 }, 'rotation_policy.key_transition_period_ms'],
      [{ next_rotation_at: 'next tuesday' }, 'rotation_policy.next_rotation_at'],
      [{ next_rotation_at: '2026-02-01T00:00:00Z' }, 'rotation_policy.next_rotation_at'],
      [{ rotation_period: 'weekly', colour: 'red' }, 'rotation_policy'],
    ];
    for (const [policy, param] of cases) {
      const res = await admin.post('/v1/api-keys/organisation/service', {
        name: 'x',
        scopes: [],
        rotation_policy: policy,
      });
      expect(res.status, JSON.stringify(policy)).toBe(400);
      expect(res.body.error, JSON.stringify(policy)).toMatchObject({ code: 'INVALID_REQUEST', param });
    }
    const created = await admin.post('/v1/api-keys/organisation/service', { name: 'x', scopes: [] });
    const update = await admin.put(`/v1/api-keys/${created.body.id}`, {
      rotation_policy: { rotation_period: 'weekly', next_rotation_at: '2026-04-01T00:00:00Z' },
    });
    expect(update.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'rotation_policy.next_rotation_at' });
  });

  it('computes next_rotation_at from the period, shows the policy and removes it with null', async () => {
    const clock = createManualClock(Date.parse('2026-01-31T10:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const weekly = await admin.post('/v1/api-keys/organisation/service', {
      name: 'w',
      scopes: [],
      rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 3_600_000 },
    });
    expect(weekly.status).toBe(200);
    expect((await admin.get(`/v1/api-keys/${weekly.body.id}`)).body.rotation_policy).toEqual({
      rotation_period: 'weekly',
      next_rotation_at: '2026-02-07T10:00:00.000Z',
      key_transition_period_ms: 3_600_000,
      secret_reference_id: null,
      secret_key: null,
    });

    const monthly = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: [] });
    expect(
      (await admin.put(`/v1/api-keys/${monthly.id}`, { rotation_policy: { rotation_period: 'monthly' } })).status,
    ).toBe(200);
    expect((await admin.get(`/v1/api-keys/${monthly.id}`)).body.rotation_policy).toEqual({
      rotation_period: 'monthly',
      next_rotation_at: '2026-02-28T10:00:00.000Z',
      key_transition_period_ms: 1_800_000,
      secret_reference_id: null,
      secret_key: null,
    });

    expect(
      (
        await admin.put(`/v1/api-keys/${monthly.id}`, {
          rotation_policy: { next_rotation_at: '2026-02-10T12:00:00+02:00' },
        })
      ).status,
    ).toBe(200);
    expect((await admin.get(`/v1/api-keys/${monthly.id}`)).body.rotation_policy).toEqual({
      rotation_period: null,
      next_rotation_at: '2026-02-10T10:00:00.000Z',
      key_transition_period_ms: 1_800_000,
      secret_reference_id: null,
      secret_key: null,
    });

    expect((await admin.put(`/v1/api-keys/${monthly.id}`, { rotation_policy: null })).status).toBe(200);
    const listed = await admin.get('/v1/api-keys');
    expect(listed.body.data.find((k: { id: string }) => k.id === monthly.id)).toMatchObject({
      rotation_policy: null,
      last_reset_at: null,
    });

    // last_reset_at comes from the key's usage limits.
    await admin.put(`/v1/api-keys/${monthly.id}`, { usage_limits: { credit_limit: 10 } });
    clock.advance(HOUR);
    expect((await admin.put(`/v1/api-keys/${monthly.id}`, { reset_usage: true })).status).toBe(200);
    expect((await admin.get(`/v1/api-keys/${monthly.id}`)).body.last_reset_at).toBe('2026-01-31T11:00:00.000Z');
  });

  it('takes the transition period of the policy when rotate names none, and a manual rotation restarts the schedule', async () => {
    const clock = createManualClock(Date.parse('2026-03-02T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/api-keys/organisation/service', {
      name: 'w',
      scopes: [],
      rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 3 * HOUR },
    });
    clock.advance(2 * DAY);
    const rotated = await admin.post(`/v1/api-keys/${created.body.id}/rotate`);
    expect(rotated.body.key_transition_expires_at).toBe('2026-03-04T03:00:00.000Z');
    expect((await admin.get(`/v1/api-keys/${created.body.id}`)).body.rotation_policy.next_rotation_at).toBe(
      '2026-03-11T00:00:00.000Z',
    );
  });
});

describe('scheduled rotation', () => {
  it('announces, rotates on schedule without a secret anyone sees, survives a restart and hands out the key on request', async () => {
    const clock = createManualClock(Date.parse('2026-03-02T00:00:00Z'));
    const t1 = await startTestServer({ clock });
    const admin = apiClient(t1.baseUrl, t1.adminKey);
    const orgId = t1.server.bootstrap.organisationId;
    const memberId = await addUser(t1.server.db, orgId, 'member', [
      { workspaceId: t1.server.bootstrap.workspaceId, role: 'member' },
    ]);
    const created = await admin.post('/v1/api-keys/workspace/user', {
      name: 'app',
      workspace_id: 'default',
      user_id: memberId,
      scopes: ['workspace_user_api_keys.read', 'workspace_user_api_keys.update'],
      rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: HOUR },
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;

    await t1.server.keyLifecycle.runOnce();
    expect(await notices(t1.server.db, 'api_key.rotation_upcoming')).toHaveLength(0);
    clock.set(Date.parse('2026-03-08T01:00:00Z'));
    await t1.server.keyLifecycle.runOnce();
    await t1.server.keyLifecycle.runOnce();
    const upcoming = await notices(t1.server.db, 'api_key.rotation_upcoming');
    expect(upcoming).toHaveLength(1);
    expect(upcoming[0]!.body_text).toContain(`POST /v1/api-keys/${id}/rotate`);
    expect(JSON.parse(upcoming[0]!.recipients)).toEqual([`${memberId}@example.test`, 'owner@svcgw.local']);

    // Down over the due time; the next start catches up.
    await t1.close();
    clock.set(Date.parse('2026-03-09T00:10:00Z'));
    const t2 = await startTestServer({ clock, dataDir: t1.dataDir });
    await t2.server.keyLifecycle.runOnce();
    const admin2 = apiClient(t2.baseUrl, t1.adminKey);
    const after = await admin2.get(`/v1/api-keys/${id}`);
    expect(after.body).toMatchObject({
      new_key_pending_since: '2026-03-09T00:10:00.000Z',
      key_transition_expires_at: '2026-03-09T01:10:00.000Z',
      rotation_policy: { rotation_period: 'weekly', next_rotation_at: '2026-03-16T00:00:00.000Z' },
    });
    const oldKey = apiClient(t2.baseUrl, created.body.key);
    expect((await oldKey.get(`/v1/api-keys/${id}`)).status).toBe(200);

    const rotatedNotices = await notices(t2.server.db, 'api_key.rotated');
    expect(rotatedNotices).toHaveLength(1);
    expect(rotatedNotices[0]!.body_text).toMatch(/No new key was issued/);
    expect(rotatedNotices[0]!.body_text).toContain('2026-03-09T01:10:00.000Z');
    expect(JSON.parse(rotatedNotices[0]!.recipients)).toContain(`${memberId}@example.test`);

    // The owner collects the new key; the transition the schedule started stands.
    const collected = await oldKey.post(`/v1/api-keys/${id}/rotate`, { key_transition_period_ms: 10 * HOUR });
    expect(collected.status).toBe(200);
    expect(collected.body.key_transition_expires_at).toBe('2026-03-09T01:10:00.000Z');
    const newKey = apiClient(t2.baseUrl, collected.body.key);
    expect((await newKey.get(`/v1/api-keys/${id}`)).body).toMatchObject({
      new_key_pending_since: null,
      rotation_policy: { next_rotation_at: '2026-03-16T00:00:00.000Z' },
    });
    expect((await oldKey.get(`/v1/api-keys/${id}`)).status).toBe(200);
    clock.set(Date.parse('2026-03-09T01:10:00Z'));
    expect((await oldKey.get(`/v1/api-keys/${id}`)).body.error.message).toMatch(/rotated/);
    expect((await newKey.get(`/v1/api-keys/${id}`)).status).toBe(200);
    await t2.server.keyLifecycle.runOnce();
    expect(await notices(t2.server.db, 'api_key.rotated')).toHaveLength(1);

    // Three weeks of downtime: one rotation, and the schedule skips the missed periods.
    await t2.close();
    clock.set(Date.parse('2026-04-03T12:00:00Z'));
    const t3 = await startTestServer({ clock, dataDir: t1.dataDir });
    await t3.server.keyLifecycle.runOnce();
    const late = await apiClient(t3.baseUrl, t1.adminKey).get(`/v1/api-keys/${id}`);
    expect(late.body).toMatchObject({
      new_key_pending_since: '2026-04-03T12:00:00.000Z',
      rotation_policy: { next_rotation_at: '2026-04-06T00:00:00.000Z' },
    });
    expect((await apiClient(t3.baseUrl, collected.body.key).get(`/v1/api-keys/${id}`)).status).toBe(200);
    expect(await notices(t3.server.db, 'api_key.rotated')).toHaveLength(2);
  });

  it('a one-off next_rotation_at fires once; a manual rotation before it takes its place', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const policy = { rotation_policy: { next_rotation_at: '2026-03-05T00:00:00Z' } };
    const once = await admin.post('/v1/api-keys/organisation/service', {
      name: 'once',
      scopes: ['workspaces.list'],
      ...policy,
    });
    const manual = await admin.post('/v1/api-keys/organisation/service', {
      name: 'manual',
      scopes: ['workspaces.list'],
      ...policy,
    });
    clock.set(Date.parse('2026-03-04T12:00:00Z'));
    const early = await admin.post(`/v1/api-keys/${manual.body.id}/rotate`);
    expect(early.status).toBe(200);
    expect((await admin.get(`/v1/api-keys/${manual.body.id}`)).body.rotation_policy).toEqual({
      rotation_period: null,
      next_rotation_at: null,
      key_transition_period_ms: 1_800_000,
      secret_reference_id: null,
      secret_key: null,
    });

    clock.set(Date.parse('2026-03-05T00:00:00Z'));
    expect((await t.server.keyLifecycle.runOnce()).rotated).toBe(1);
    expect((await admin.get(`/v1/api-keys/${once.body.id}`)).body).toMatchObject({
      new_key_pending_since: '2026-03-05T00:00:00.000Z',
      rotation_policy: { next_rotation_at: null },
    });
    clock.advance(30 * MINUTE);
    expect((await apiClient(t.baseUrl, once.body.key).get('/v1/workspaces')).status).toBe(401);
    expect((await apiClient(t.baseUrl, early.body.key).get('/v1/workspaces')).status).toBe(200);
    expect((await t.server.keyLifecycle.runOnce()).rotated).toBe(0);
  });
});
