import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

/** Invites someone and redeems the token through the public route, as a new user would. */
async function join(t: TestServer, inviter: ApiClient, body: Record<string, unknown>) {
  const invited = await inviter.post('/v1/invites', body);
  if (invited.status !== 200) throw new Error(`invite failed: ${invited.status} ${JSON.stringify(invited.body)}`);
  const accepted = await apiClient(t.baseUrl).post('/v1/invites/accept', {
    token: invited.body.token,
    first_name: 'First',
    last_name: 'Last',
  });
  if (accepted.status !== 200) throw new Error(`accept failed: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  return {
    userId: accepted.body.user.id as string,
    keyId: accepted.body.api_key_id as string,
    rawKey: accepted.body.api_key as string,
    key: apiClient(t.baseUrl, accepted.body.api_key),
  };
}

const NOBODY = '00000000-0000-4000-8000-000000000000';

describe('users: read', () => {
  it('lists and reads users in the reference shape, with filters and pages', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');
    const ada = await join(t, admin, {
      email: 'ada@example.test',
      role: 'admin',
      workspaces: [{ id: 'team-a', role: 'admin' }],
    });
    await join(t, admin, {
      email: 'bob@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
    });

    const list = await admin.get('/v1/users');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', total: 3 });
    expect(list.body.data.map((u: { role: string }) => u.role)).toEqual(['owner', 'admin', 'member']);
    const one = await admin.get(`/v1/users/${ada.userId}`);
    expect(one.status).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual([
      'created_at',
      'email',
      'first_name',
      'id',
      'last_name',
      'last_updated_at',
      'object',
      'role',
      'workspace_ids',
    ]);
    expect(one.body).toMatchObject({
      object: 'user',
      id: ada.userId,
      first_name: 'First',
      last_name: 'Last',
      role: 'admin',
      email: 'ada@example.test',
      workspace_ids: [team.id],
    });
    expect((await admin.get(`/v1/users/${list.body.data[0].id}`)).body.workspace_ids).toEqual([
      t.server.bootstrap.workspaceId,
    ]);

    expect((await admin.get('/v1/users?role=member')).body.data.map((u: { email: string }) => u.email)).toEqual([
      'bob@example.test',
    ]);
    expect((await admin.get('/v1/users?email=ADA@example.test')).body.total).toBe(1);
    const page = await admin.get('/v1/users?page_size=1&current_page=2');
    expect(page.body.total).toBe(3);
    expect(page.body.data.map((u: { email: string }) => u.email)).toEqual(['bob@example.test']);

    expect((await admin.get('/v1/users?role=boss')).body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      param: 'role',
    });
    expect((await admin.get('/v1/users?page_size=-1')).body.error.param).toBe('page_size');
    expect((await admin.get('/v1/users?colour=red')).status).toBe(400);
    expect((await admin.get(`/v1/users/${NOBODY}`)).status).toBe(404);
    expect((await admin.get('/v1/users/not-a-uuid')).body.error).toMatchObject({ code: 'NOT_FOUND', param: 'userId' });
  });

  it('needs an admin key (401 without, 403 for workspace keys or a missing scope)', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    expect((await apiClient(t.baseUrl).get('/v1/users')).status).toBe(401);
    expect((await apiClient(t.baseUrl, `svc-${'x'.repeat(43)}`).get('/v1/users')).status).toBe(401);
    const workspaceKey = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['workspace_users.list'] })).key,
    );
    const byWorkspaceKey = await workspaceKey.get('/v1/users');
    expect(byWorkspaceKey.status).toBe(403);
    expect(byWorkspaceKey.body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');
    const readOnly = apiClient(
      t.baseUrl,
      (await admin.post('/v1/api-keys/organisation/service', { name: 'ro', scopes: ['organisation_users.list'] })).body
        .key,
    );
    expect((await readOnly.get('/v1/users')).status).toBe(200);
    const noScope = await readOnly.delete(`/v1/users/${NOBODY}`);
    expect(noScope.status).toBe(403);
    expect(noScope.body.error.code).toBe('MISSING_SCOPE');
  });
});

describe('users: change the organisation role', () => {
  it('takes effect at once on the user’s key', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);
    const ada = await join(t, owner, { email: 'ada@example.test', role: 'admin' });
    const bob = await join(t, owner, {
      email: 'bob@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
    });

    // As an admin, Ada creates workspaces and changes roles.
    expect((await ada.key.post('/v1/workspaces', { name: 'By Ada' })).status).toBe(200);
    expect((await ada.key.put(`/v1/users/${bob.userId}`, { role: 'admin' })).status).toBe(200);
    expect((await owner.get(`/v1/users/${bob.userId}`)).body.role).toBe('admin');
    expect((await ada.key.put(`/v1/users/${bob.userId}`, { role: 'member' })).status).toBe(200);

    // Demoted, her (cached) key loses the powers of the role on its very next request.
    expect((await owner.put(`/v1/users/${ada.userId}`, { role: 'member' })).status).toBe(200);
    const refused = await ada.key.post('/v1/workspaces', { name: 'Again' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('ROLE_NOT_ALLOWED');
    expect((await ada.key.put(`/v1/users/${bob.userId}`, { role: 'admin' })).status).toBe(403);
    // Promoted again, at once too.
    expect((await owner.put(`/v1/users/${ada.userId}`, { role: 'admin' })).status).toBe(200);
    expect((await ada.key.post('/v1/workspaces', { name: 'Again' })).status).toBe(200);

    const audit = await t.server.db
      .selectFrom('audit_logs')
      .selectAll()
      .where('resource_type', '=', 'user')
      .where('action', '=', 'update')
      .execute();
    expect(audit.length).toBeGreaterThanOrEqual(4);
  });

  it('never makes or unmakes an owner, and admins cannot touch owners', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);
    const ownerId = (await owner.get('/v1/users?role=owner')).body.data[0].id;
    const ada = await join(t, owner, { email: 'ada@example.test', role: 'admin' });

    const makeOwner = await owner.put(`/v1/users/${ada.userId}`, { role: 'owner' });
    expect(makeOwner.status).toBe(400);
    expect(makeOwner.body.error.param).toBe('role');
    const unmakeOwner = await owner.put(`/v1/users/${ownerId}`, { role: 'admin' });
    expect(unmakeOwner.status).toBe(403);
    expect(unmakeOwner.body.error.code).toBe('ROLE_NOT_ALLOWED');
    const adminOnOwner = await ada.key.put(`/v1/users/${ownerId}`, { role: 'member' });
    expect(adminOnOwner.status).toBe(403);
    expect(adminOnOwner.body.error.code).toBe('ROLE_NOT_ALLOWED');
    expect((await ada.key.delete(`/v1/users/${ownerId}`)).status).toBe(403);

    expect((await owner.put(`/v1/users/${ada.userId}`, {})).body.error.param).toBe('role');
    expect(
      (await owner.put(`/v1/users/${ada.userId}`, { role: 'member', email: 'x@example.test' })).body.error.param,
    ).toBe('body');
    expect((await owner.put(`/v1/users/${NOBODY}`, { role: 'member' })).status).toBe(404);
  });

  it('lets only owners and admins change anything', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);
    const ada = await join(t, owner, { email: 'ada@example.test', role: 'admin' });
    const bob = await join(t, owner, {
      email: 'bob@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
    });
    // Ada makes an admin key for herself, then is demoted: the key keeps its scopes, not her role.
    const adaSecond = apiClient(
      t.baseUrl,
      (
        await ada.key.post('/v1/api-keys/organisation/service', {
          name: 'ada 2',
          scopes: ['organisation_users.list', 'organisation_users.update', 'organisation_users.delete'],
        })
      ).body.key,
    );
    await owner.put(`/v1/users/${ada.userId}`, { role: 'member' });
    expect((await adaSecond.get('/v1/users')).status).toBe(200);
    const change = await adaSecond.put(`/v1/users/${bob.userId}`, { role: 'admin' });
    expect(change.status).toBe(403);
    expect(change.body.error.code).toBe('ROLE_NOT_ALLOWED');
    expect((await adaSecond.delete(`/v1/users/${bob.userId}`)).status).toBe(403);
  });
});

describe('users: remove', () => {
  it('removes memberships and revokes every key of the user at once', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(owner, 'Team A', 'team-a');
    const bob = await join(t, owner, {
      email: 'bob@example.test',
      role: 'member',
      workspaces: [
        { id: 'team-a', role: 'manager' },
        { id: 'default', role: 'member' },
      ],
    });
    const second = await bob.key.post('/v1/api-keys/workspace/user', {
      name: 'second',
      workspace_id: 'team-a',
      scopes: ['workspaces.read'],
    });
    expect(second.status).toBe(200);
    const secondKey = apiClient(t.baseUrl, second.body.key);
    expect((await bob.key.get('/v1/workspaces/team-a')).status).toBe(200);
    expect((await secondKey.get('/v1/workspaces/team-a')).status).toBe(200);

    const removed = await owner.delete(`/v1/users/${bob.userId}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({});
    for (const key of [bob.key, secondKey]) {
      const refused = await key.get('/v1/workspaces/team-a');
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('INVALID_API_KEY');
    }
    expect((await owner.get(`/v1/users/${bob.userId}`)).status).toBe(404);
    expect((await owner.get('/v1/workspaces/team-a/members')).body.total).toBe(0);
    expect((await owner.get(`/v1/api-keys/${bob.keyId}`)).status).toBe(404);
    expect((await owner.delete(`/v1/users/${bob.userId}`)).status).toBe(404);
    // The address is free again: the person can be invited back.
    expect(
      (
        await owner.post('/v1/invites', {
          email: 'bob@example.test',
          role: 'member',
          workspaces: [{ id: 'default', role: 'member' }],
        })
      ).status,
    ).toBe(200);
    const audit = await t.server.db
      .selectFrom('audit_logs')
      .selectAll()
      .where('resource_type', '=', 'user')
      .where('action', '=', 'delete')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ resource_id: bob.userId, response_status_code: 200 });
  });

  it('refuses to remove the last owner', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);
    const ownerId = (await owner.get('/v1/users?role=owner')).body.data[0].id;
    const last = await owner.delete(`/v1/users/${ownerId}`);
    expect(last.status).toBe(400);
    expect(last.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'userId' });
    expect((await owner.get('/v1/users')).status).toBe(200);
  });
});
