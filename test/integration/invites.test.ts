import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createWorkspace } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const DAY = 86_400_000;

/** Invites someone and redeems the token through the public route, as a new user would. */
async function join(t: TestServer, inviter: ApiClient, body: Record<string, unknown>) {
  const invited = await inviter.post('/v1/invites', body);
  if (invited.status !== 200) throw new Error(`invite failed: ${invited.status} ${JSON.stringify(invited.body)}`);
  const accepted = await apiClient(t.baseUrl).post('/v1/invites/accept', { token: invited.body.token });
  if (accepted.status !== 200) throw new Error(`accept failed: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  return {
    inviteId: invited.body.id as string,
    userId: accepted.body.user.id as string,
    key: apiClient(t.baseUrl, accepted.body.api_key),
  };
}

describe('invites: the flow end to end', () => {
  it('creates an invite, accepts it through the public route, and the returned key works', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');

    const created = await admin.post('/v1/invites', {
      email: 'Ada@Example.test',
      role: 'member',
      workspaces: [
        { id: 'team-a', role: 'manager' },
        { id: 'default', role: 'member' },
      ],
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['expires_at', 'id', 'invite_link', 'object', 'token']);
    expect(created.body.object).toBe('invite');
    expect(created.body.token).toMatch(/^svcinv-[A-Za-z0-9_-]{43}$/);
    const link = new URL(created.body.invite_link);
    expect(`${link.protocol}//${link.host}`).toBe(t.baseUrl);
    expect(link.pathname).toBe('/v1/invites/accept');
    expect(link.searchParams.get('token')).toBe(created.body.token);
    expect(Date.parse(created.body.expires_at) - Date.now()).toBeGreaterThan(6.9 * DAY);

    // Only a hash is stored; the token appears nowhere else (audit record included).
    const stored = await t.server.db
      .selectFrom('invites')
      .selectAll()
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(stored.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(created.body.token);

    const shown = await admin.get(`/v1/invites/${created.body.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      object: 'invite',
      id: created.body.id,
      email: 'ada@example.test',
      role: 'member',
      status: 'pending',
      workspaces: [
        { workspace_id: team.id, role: 'manager' },
        { workspace_id: t.server.bootstrap.workspaceId, role: 'member' },
      ],
      accepted_at: null,
      cancelled_at: null,
    });
    expect(JSON.stringify(shown.body)).not.toContain(created.body.token);

    const anonymous = apiClient(t.baseUrl);
    const accepted = await anonymous.post('/v1/invites/accept', {
      token: created.body.token,
      first_name: 'Ada',
      last_name: 'Lovelace',
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user).toMatchObject({
      object: 'user',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.test',
      role: 'member',
      workspace_ids: [team.id, t.server.bootstrap.workspaceId],
    });
    expect(accepted.body.api_key).toMatch(/^svc-/);

    // The first key is a workspace key in the first workspace, with the manager's scopes.
    const key = apiClient(t.baseUrl, accepted.body.api_key);
    const keyRow = await admin.get(`/v1/api-keys/${accepted.body.api_key_id}`);
    expect(keyRow.body).toMatchObject({
      type: 'workspace-user',
      workspace_id: team.id,
      user_id: accepted.body.user.id,
      creation_mode: 'auto',
    });
    expect(keyRow.body.scopes).toEqual(
      expect.arrayContaining(['completions.write', 'workspace_users.create', 'workspace_user_api_keys.create']),
    );
    expect((await key.get('/v1/workspaces/team-a')).status).toBe(200);
    const members = await key.get('/v1/workspaces/team-a/members');
    expect(members.status).toBe(200);
    expect(members.body.data.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      ['ada@example.test', 'manager'],
    ]);
    // As a manager they create keys in their workspace.
    expect(
      (
        await key.post('/v1/api-keys/workspace/user', {
          name: 'mine',
          workspace_id: 'team-a',
          scopes: ['completions.write'],
        })
      ).status,
    ).toBe(200);

    expect((await admin.get(`/v1/invites/${created.body.id}`)).body).toMatchObject({
      status: 'accepted',
      accepted_at: expect.any(String),
    });

    // The accept is in the audit log, with the token redacted and the new user as actor.
    const records = await t.server.db
      .selectFrom('audit_logs')
      .selectAll()
      .where('resource_type', '=', 'invite')
      .orderBy('seq')
      .execute();
    expect(records.map((r) => r.action)).toEqual(['create', 'accept']);
    expect(records[1]).toMatchObject({
      actor_user_id: accepted.body.user.id,
      actor_key_id: accepted.body.api_key_id,
      resource_id: created.body.id,
      response_status_code: 200,
    });
    expect(records[1]!.request_body).not.toContain(created.body.token);

    // A token works once.
    const twice = await anonymous.post('/v1/invites/accept', { token: created.body.token });
    expect(twice.status).toBe(410);
    expect(twice.body.error).toMatchObject({ code: 'INVITE_ALREADY_ACCEPTED', param: 'token' });
  });

  it('gives an invited organisation admin an admin key with every scope', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { key, userId } = await join(t, admin, { email: 'root@example.test', role: 'admin' });
    const me = await key.get(`/v1/users/${userId}`);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ role: 'admin', workspace_ids: [] });
    const scopes = await admin.get('/v1/api-keys/scopes');
    const keys = await admin.get('/v1/api-keys');
    const own = keys.body.data.find((k: { user_id: string }) => k.user_id === userId);
    expect(own).toMatchObject({ type: 'organisation-service' });
    expect(own.scopes).toHaveLength(scopes.body.total);
    expect((await key.post('/v1/workspaces', { name: 'Made by the new admin' })).status).toBe(200);
  });

  it('resend replaces the token and the expiry; the old token stops working', async () => {
    const clock = createManualClock(Date.parse('2026-04-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/invites', {
      email: 'bob@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
      expires_in_days: 2,
    });
    expect(created.body.expires_at).toBe('2026-04-03T00:00:00.000Z');

    clock.advance(DAY);
    const resent = await admin.post(`/v1/invites/${created.body.id}/resend`);
    expect(resent.status).toBe(200);
    expect(resent.body.id).toBe(created.body.id);
    expect(resent.body.token).not.toBe(created.body.token);
    expect(resent.body.inviteLink).toBe(resent.body.invite_link);
    expect(resent.body.expires_at).toBe('2026-04-09T00:00:00.000Z');

    const old = await apiClient(t.baseUrl).post('/v1/invites/accept', { token: created.body.token });
    expect(old.status).toBe(400);
    expect(old.body.error).toMatchObject({ code: 'INVALID_INVITE_TOKEN', param: 'token' });
    expect((await apiClient(t.baseUrl).post('/v1/invites/accept', { token: resent.body.token })).status).toBe(200);
    const again = await admin.post(`/v1/invites/${created.body.id}/resend`, { expires_in_days: 3 });
    expect(again.status).toBe(409);
  });

  it('an invite past expires_at (on the server clock) reads as expired, refuses acceptance, and can be resent', async () => {
    const clock = createManualClock(Date.parse('2026-04-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/invites', {
      email: 'late@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
    });
    expect(created.body.expires_at).toBe('2026-04-08T00:00:00.000Z');

    clock.advance(7 * DAY);
    expect((await admin.get(`/v1/invites/${created.body.id}`)).body.status).toBe('expired');
    expect((await admin.get('/v1/invites?status=expired')).body.total).toBe(1);
    expect((await admin.get('/v1/invites?status=pending')).body.total).toBe(0);
    const expired = await apiClient(t.baseUrl).post('/v1/invites/accept', { token: created.body.token });
    expect(expired.status).toBe(410);
    expect(expired.body.error).toMatchObject({ code: 'INVITE_EXPIRED', param: 'token' });
    expect(
      await t.server.db.selectFrom('users').selectAll().where('email', '=', 'late@example.test').executeTakeFirst(),
    ).toBeUndefined();

    // An expired invite no longer blocks a new one for the address; resending revives this one.
    const resent = await admin.post(`/v1/invites/${created.body.id}/resend`, { expires_in_days: 1 });
    expect(resent.status).toBe(200);
    expect(resent.body.expires_at).toBe('2026-04-09T00:00:00.000Z');
    expect((await admin.get(`/v1/invites/${created.body.id}`)).body.status).toBe('pending');
    expect((await apiClient(t.baseUrl).post('/v1/invites/accept', { token: resent.body.token })).status).toBe(200);
  });

  it('revoking stops the token; revoking twice is harmless; accepted invites cannot be revoked', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/invites', {
      email: 'gone@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
    });
    expect((await admin.delete(`/v1/invites/${created.body.id}`)).status).toBe(200);
    expect((await admin.delete(`/v1/invites/${created.body.id}`)).status).toBe(200);
    expect((await admin.get(`/v1/invites/${created.body.id}`)).body).toMatchObject({
      status: 'cancelled',
      cancelled_at: expect.any(String),
    });
    const revoked = await apiClient(t.baseUrl).post('/v1/invites/accept', { token: created.body.token });
    expect(revoked.status).toBe(410);
    expect(revoked.body.error.code).toBe('INVITE_REVOKED');
    expect((await admin.post(`/v1/invites/${created.body.id}/resend`)).status).toBe(409);

    const { inviteId } = await join(t, admin, {
      email: 'kept@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
    });
    const accepted = await admin.delete(`/v1/invites/${inviteId}`);
    expect(accepted.status).toBe(409);
    expect(accepted.body.error.code).toBe('CONFLICT');
  });
});

describe('invites: validation and access', () => {
  it('rejects invalid bodies with 400 naming the parameter', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const ok = { email: 'x@example.test', role: 'member', workspaces: [{ id: 'default', role: 'member' }] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...ok, email: 'not-an-address' }, 'email'],
      [{ ...ok, email: undefined }, 'email'],
      [{ ...ok, role: 'owner' }, 'role'],
      [{ ...ok, workspaces: [{ id: 'default', role: 'boss' }] }, 'workspaces[0].role'],
      [{ ...ok, workspaces: [{ id: 'default', role: 'member', extra: 1 }] }, 'workspaces[0]'],
      [{ ...ok, expires_in_days: 0 }, 'expires_in_days'],
      [{ ...ok, expires_in_days: 31 }, 'expires_in_days'],
      [{ ...ok, colour: 'red' }, 'body'],
      [{ ...ok, workspaces: [] }, 'workspaces'],
      [{ ...ok, workspaces: undefined }, 'workspaces'],
      [
        {
          ...ok,
          workspaces: [
            { id: 'default', role: 'member' },
            { id: 'default', role: 'admin' },
          ],
        },
        'workspaces[1].id',
      ],
    ];
    for (const [body, param] of cases) {
      const res = await admin.post('/v1/invites', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      expect(res.body.error.param).toBe(param);
    }
    const unknownWorkspace = await admin.post('/v1/invites', { ...ok, workspaces: [{ id: 'nope', role: 'member' }] });
    expect(unknownWorkspace.status).toBe(404);
    expect(unknownWorkspace.body.error.param).toBe('workspaces[0].id');
    expect((await t.server.db.selectFrom('invites').selectAll().execute()).length).toBe(0);

    const accept = apiClient(t.baseUrl);
    expect((await accept.post('/v1/invites/accept', {})).body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      param: 'token',
    });
    expect((await accept.post('/v1/invites/accept', { token: 'svcinv-short' })).body.error).toMatchObject({
      code: 'INVALID_INVITE_TOKEN',
      param: 'token',
    });
    expect((await accept.post('/v1/invites/accept', { token: `svcinv-${'A'.repeat(43)}` })).status).toBe(400);
    expect(
      (await accept.post('/v1/invites/accept', { token: `svcinv-${'A'.repeat(43)}`, role: 'owner' })).body.error.param,
    ).toBe('body');

    expect((await admin.get('/v1/invites?status=withdrawn')).body.error.param).toBe('status');
    expect((await admin.get('/v1/invites/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await admin.get('/v1/invites/not-a-uuid')).status).toBe(404);
    expect((await admin.delete('/v1/invites/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await admin.post('/v1/invites/00000000-0000-4000-8000-000000000000/resend')).status).toBe(404);
  });

  it('refuses a second invite for a user or a pending address (409)', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const body = { email: 'dup@example.test', role: 'member', workspaces: [{ id: 'default', role: 'member' }] };
    expect((await admin.post('/v1/invites', body)).status).toBe(200);
    const pending = await admin.post('/v1/invites', { ...body, email: 'DUP@example.test' });
    expect(pending.status).toBe(409);
    expect(pending.body.error).toMatchObject({ code: 'CONFLICT', param: 'email' });
    const owner = await admin.get('/v1/users?role=owner');
    const existing = await admin.post('/v1/invites', { ...body, email: owner.body.data[0].email });
    expect(existing.status).toBe(409);
  });

  it('needs a key (401) with the right scope (403), and lists with filters', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    expect((await apiClient(t.baseUrl).get('/v1/invites')).status).toBe(401);
    expect((await apiClient(t.baseUrl).post('/v1/invites', { email: 'a@example.test', role: 'admin' })).status).toBe(
      401,
    );
    const narrow = await admin.post('/v1/api-keys/organisation/service', {
      name: 'narrow',
      scopes: ['organisation_users.list'],
    });
    const narrowKey = apiClient(t.baseUrl, narrow.body.key);
    expect((await narrowKey.get('/v1/invites')).status).toBe(200);
    const refused = await narrowKey.post('/v1/invites', { email: 'a@example.test', role: 'admin' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('MISSING_SCOPE');

    await admin.post('/v1/invites', { email: 'a@example.test', role: 'admin' });
    await admin.post('/v1/invites', {
      email: 'b@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
    });
    const revoked = await admin.post('/v1/invites', {
      email: 'c@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
    });
    await admin.delete(`/v1/invites/${revoked.body.id}`);
    const all = await admin.get('/v1/invites');
    expect(all.body).toMatchObject({ object: 'list', total: 3 });
    expect((await admin.get('/v1/invites?role=admin')).body.data.map((i: { email: string }) => i.email)).toEqual([
      'a@example.test',
    ]);
    expect((await admin.get('/v1/invites?status=revoked')).body.data.map((i: { email: string }) => i.email)).toEqual([
      'c@example.test',
    ]);
    expect((await admin.get('/v1/invites?email=B@EXAMPLE.TEST')).body.total).toBe(1);
    const page = await admin.get('/v1/invites?page_size=2&current_page=1');
    expect(page.body.total).toBe(3);
    expect(page.body.data).toHaveLength(1);
  });
});

describe('invites: Errors rule 2 (no one grants more than they hold)', () => {
  it('lets a workspace manager invite members and managers into their own workspace only', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    await createWorkspace(admin, 'Team B', 'team-b');
    const manager = await join(t, admin, {
      email: 'manager@example.test',
      role: 'member',
      workspaces: [{ id: 'team-a', role: 'manager' }],
    });

    const member = await manager.key.post('/v1/invites', {
      email: 'm1@example.test',
      role: 'member',
      workspaces: [{ id: 'team-a', role: 'member' }],
    });
    expect(member.status).toBe(200);
    expect(
      (
        await manager.key.post('/v1/invites', {
          email: 'm2@example.test',
          role: 'member',
          workspaces: [{ id: 'team-a', role: 'manager' }],
        })
      ).status,
    ).toBe(200);

    const higher = await manager.key.post('/v1/invites', {
      email: 'm3@example.test',
      role: 'member',
      workspaces: [{ id: 'team-a', role: 'admin' }],
    });
    expect(higher.status).toBe(403);
    expect(higher.body.error).toMatchObject({ code: 'ROLE_NOT_ALLOWED', param: 'workspaces[0].role' });
    const orgAdmin = await manager.key.post('/v1/invites', {
      email: 'm4@example.test',
      role: 'admin',
      workspaces: [{ id: 'team-a', role: 'member' }],
    });
    expect(orgAdmin.status).toBe(403);
    expect(orgAdmin.body.error).toMatchObject({ code: 'ROLE_NOT_ALLOWED', param: 'role' });
    const elsewhere = await manager.key.post('/v1/invites', {
      email: 'm5@example.test',
      role: 'member',
      workspaces: [{ id: 'team-b', role: 'member' }],
    });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error).toMatchObject({ code: 'WORKSPACE_FORBIDDEN', param: 'workspaces[0].id' });

    // The manager sees and manages the invites into their workspace, not others.
    const other = await admin.post('/v1/invites', {
      email: 'b1@example.test',
      role: 'member',
      workspaces: [{ id: 'team-b', role: 'member' }],
    });
    const higherByAdmin = await admin.post('/v1/invites', {
      email: 'a1@example.test',
      role: 'member',
      workspaces: [{ id: 'team-a', role: 'admin' }],
    });
    const listed = await manager.key.get('/v1/invites');
    expect(listed.body.data.map((i: { email: string }) => i.email).sort()).toEqual([
      'a1@example.test',
      'm1@example.test',
      'm2@example.test',
      'manager@example.test',
    ]);
    expect((await manager.key.get(`/v1/invites/${other.body.id}`)).status).toBe(403);
    expect((await manager.key.delete(`/v1/invites/${other.body.id}`)).status).toBe(403);
    const revokeHigher = await manager.key.delete(`/v1/invites/${higherByAdmin.body.id}`);
    expect(revokeHigher.status).toBe(403);
    expect(revokeHigher.body.error.code).toBe('ROLE_NOT_ALLOWED');
    expect((await manager.key.post(`/v1/invites/${member.body.id}/resend`)).status).toBe(200);
    expect((await manager.key.delete(`/v1/invites/${member.body.id}`)).status).toBe(200);

    // A member invites no one.
    const plain = await join(t, admin, {
      email: 'plain@example.test',
      role: 'member',
      workspaces: [{ id: 'team-a', role: 'member' }],
    });
    const byMember = await plain.key.post('/v1/invites', {
      email: 'm6@example.test',
      role: 'member',
      workspaces: [{ id: 'team-a', role: 'member' }],
    });
    expect(byMember.status).toBe(403);
  });
});
