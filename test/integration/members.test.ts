import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

/** Invites someone and redeems the token through the public route, as a new user would. */
async function join(t: TestServer, inviter: ApiClient, body: Record<string, unknown>) {
  const invited = await inviter.post('/v1/invites', body);
  if (invited.status !== 200) throw new Error(`invite failed: ${invited.status} ${JSON.stringify(invited.body)}`);
  const accepted = await apiClient(t.baseUrl).post('/v1/invites/accept', { token: invited.body.token });
  if (accepted.status !== 200) throw new Error(`accept failed: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  return { userId: accepted.body.user.id as string, key: apiClient(t.baseUrl, accepted.body.api_key) };
}

const member = (email: string, workspace = 'default', role = 'member') => ({
  email,
  role: 'member',
  workspaces: [{ id: workspace, role }],
});
const NOBODY = '00000000-0000-4000-8000-000000000000';

describe('members: list, add, change, remove', () => {
  it('serves members in the reference shape, with filters, and manages them', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');
    const ada = await join(t, admin, member('ada@example.test'));
    const bob = await join(t, admin, member('bob@example.test'));

    const added = await admin.post('/v1/workspaces/team-a/members', {
      users: [
        { id: ada.userId, role: 'manager' },
        { id: bob.userId, role: 'member' },
      ],
    });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({});

    const list = await admin.get(`/v1/workspaces/${team.id}/members`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', total: 2 });
    const first = list.body.data.find((m: { id: string }) => m.id === ada.userId);
    expect(Object.keys(first).sort()).toEqual([
      'created_at',
      'email',
      'first_name',
      'id',
      'last_name',
      'last_updated_at',
      'object',
      'org_role',
      'role',
      'scopes',
      'settings',
      'status',
      'workspace_id',
    ]);
    expect(first).toMatchObject({
      object: 'workspace-user',
      id: ada.userId,
      email: 'ada@example.test',
      org_role: 'member',
      role: 'manager',
      workspace_id: team.id,
      status: 'active',
      settings: null,
    });
    // A manager's role gives every workspace scope; a member's only the member scopes.
    expect(first.scopes).toContain('workspace_users.create');
    const bobRead = (await admin.get(`/v1/admin/workspaces/team-a/users/${bob.userId}`)).body;
    expect(bobRead.scopes).toContain('completions.write');
    expect(bobRead.scopes).not.toContain('workspace_users.create');
    expect(
      (await admin.get('/v1/workspaces/team-a/members?role=member')).body.data.map((m: { id: string }) => m.id),
    ).toEqual([bob.userId]);
    expect((await admin.get('/v1/workspaces/team-a/members?email=BOB@example.test')).body.total).toBe(1);
    const page = await admin.get('/v1/workspaces/team-a/members?page_size=1&current_page=1');
    expect(page.body.total).toBe(2);
    expect(page.body.data).toHaveLength(1);
    expect((await admin.get(`/v1/workspaces/team-a/members/${bob.userId}`)).body).toMatchObject({
      id: bob.userId,
      role: 'member',
    });
    expect((await admin.get(`/v1/users/${bob.userId}`)).body.workspace_ids).toEqual([
      t.server.bootstrap.workspaceId,
      team.id,
    ]);

    expect((await admin.put(`/v1/workspaces/team-a/members/${bob.userId}`, { role: 'admin' })).status).toBe(200);
    const changed = (await admin.get(`/v1/workspaces/team-a/members/${bob.userId}`)).body;
    expect(changed.role).toBe('admin');

    expect((await admin.delete(`/v1/workspaces/team-a/members/${bob.userId}`)).status).toBe(200);
    expect((await admin.get('/v1/workspaces/team-a/members')).body.total).toBe(1);
    expect((await admin.get(`/v1/workspaces/team-a/members/${bob.userId}`)).status).toBe(404);

    const actions = await t.server.db
      .selectFrom('audit_logs')
      .select(['action', 'workspace_id'])
      .where('resource_type', '=', 'workspace_member')
      .orderBy('seq')
      .execute();
    expect(actions).toEqual([
      { action: 'create', workspace_id: team.id },
      { action: 'update', workspace_id: team.id },
      { action: 'delete', workspace_id: team.id },
    ]);
  });

  it('answers 400 naming the parameter, 404 for unknown workspaces and users, 409 for existing members', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    const ada = await join(t, admin, member('ada@example.test'));
    const cases: Array<[unknown, string]> = [
      [{}, 'users'],
      [{ users: [] }, 'users'],
      [{ users: [{ id: 'not-a-uuid', role: 'member' }] }, 'users[0].id'],
      [{ users: [{ id: ada.userId, role: 'owner' }] }, 'users[0].role'],
      [{ users: [{ id: ada.userId }] }, 'users[0].role'],
      [{ users: [{ id: ada.userId, role: 'member' }], extra: true }, 'body'],
      [
        {
          users: [
            { id: ada.userId, role: 'member' },
            { id: ada.userId, role: 'manager' },
          ],
        },
        'users[1].id',
      ],
    ];
    for (const [body, param] of cases) {
      const res = await admin.post('/v1/workspaces/team-a/members', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', param });
    }
    const unknownUser = await admin.post('/v1/workspaces/team-a/members', { users: [{ id: NOBODY, role: 'member' }] });
    expect(unknownUser.status).toBe(404);
    expect(unknownUser.body.error.param).toBe('users[0].id');
    const unknownWorkspace = await admin.get('/v1/workspaces/nope/members');
    expect(unknownWorkspace.status).toBe(404);
    expect(unknownWorkspace.body.error.param).toBe('workspaceId');
    const already = await admin.post('/v1/workspaces/default/members', {
      users: [{ id: ada.userId, role: 'manager' }],
    });
    expect(already.status).toBe(409);
    expect(already.body.error).toMatchObject({ code: 'CONFLICT', param: 'users[0].id' });
    expect((await admin.put(`/v1/workspaces/team-a/members/${ada.userId}`, { role: 'member' })).status).toBe(404);
    expect((await admin.put(`/v1/workspaces/default/members/${ada.userId}`, { role: 'chief' })).body.error.param).toBe(
      'role',
    );
    expect((await admin.delete(`/v1/workspaces/default/members/${NOBODY}`)).status).toBe(404);
    expect((await admin.get('/v1/workspaces/default/members?role=chief')).body.error.param).toBe('role');
    expect((await apiClient(t.baseUrl).get('/v1/workspaces/default/members')).status).toBe(401);
  });
});

describe('members: Errors rule 2 and workspace boundaries', () => {
  it('lets a manager manage their own workspace, never granting or touching a role above their own', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    await createWorkspace(admin, 'Team B', 'team-b');
    const manager = await join(t, admin, member('manager@example.test', 'team-a', 'manager'));
    const carol = await join(t, admin, member('carol@example.test'));
    const dave = await join(t, admin, member('dave@example.test'));
    const boss = await join(t, admin, member('boss@example.test', 'team-a', 'admin'));

    expect(
      (await manager.key.post('/v1/workspaces/team-a/members', { users: [{ id: carol.userId, role: 'member' }] }))
        .status,
    ).toBe(200);
    expect(
      (await manager.key.post('/v1/workspaces/team-a/members', { users: [{ id: dave.userId, role: 'manager' }] }))
        .status,
    ).toBe(200);
    const higher = await manager.key.post('/v1/workspaces/team-a/members', {
      users: [{ id: carol.userId, role: 'admin' }],
    });
    expect(higher.status).toBe(403);
    expect(higher.body.error).toMatchObject({ code: 'ROLE_NOT_ALLOWED', param: 'users[0].role' });
    const promote = await manager.key.put(`/v1/workspaces/team-a/members/${carol.userId}`, { role: 'admin' });
    expect(promote.status).toBe(403);
    expect(promote.body.error).toMatchObject({ code: 'ROLE_NOT_ALLOWED', param: 'role' });
    expect((await manager.key.put(`/v1/workspaces/team-a/members/${carol.userId}`, { role: 'manager' })).status).toBe(
      200,
    );
    const demoteAdmin = await manager.key.put(`/v1/workspaces/team-a/members/${boss.userId}`, { role: 'member' });
    expect(demoteAdmin.status).toBe(403);
    expect(demoteAdmin.body.error.code).toBe('ROLE_NOT_ALLOWED');
    expect((await manager.key.delete(`/v1/workspaces/team-a/members/${boss.userId}`)).status).toBe(403);
    // The workspace admin may grant admin.
    expect((await boss.key.put(`/v1/workspaces/team-a/members/${carol.userId}`, { role: 'admin' })).status).toBe(200);

    // Another workspace is out of reach.
    const elsewhere = await manager.key.post('/v1/workspaces/team-b/members', {
      users: [{ id: carol.userId, role: 'member' }],
    });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.code).toBe('WORKSPACE_FORBIDDEN');
    expect((await manager.key.get('/v1/workspaces/team-b/members')).status).toBe(403);
    expect((await manager.key.get('/v1/workspaces/team-a/members')).body.total).toBe(4);

    // A plain member only reads.
    const plainKey = apiClient(
      t.baseUrl,
      (
        await createWorkspaceKey(admin, {
          workspace_id: 'team-a',
          user_id: dave.userId,
          scopes: ['workspace_users.create', 'workspace_users.list'],
        })
      ).key,
    );
    await admin.put(`/v1/workspaces/team-a/members/${dave.userId}`, { role: 'member' });
    expect((await plainKey.get('/v1/workspaces/team-a/members')).status).toBe(200);
    const byMember = await plainKey.post('/v1/workspaces/team-a/members', {
      users: [{ id: carol.userId, role: 'member' }],
    });
    expect(byMember.status).toBe(403);
    expect(byMember.body.error.code).toBe('ROLE_NOT_ALLOWED');
  });

  it('a membership change takes effect at once on the member’s key; removal revokes their keys in the workspace', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    const manager = await join(t, admin, member('manager@example.test', 'team-a', 'manager'));
    const other = await join(t, admin, member('other@example.test'));

    expect(
      (await manager.key.post('/v1/workspaces/team-a/members', { users: [{ id: other.userId, role: 'member' }] }))
        .status,
    ).toBe(200);
    await admin.put(`/v1/workspaces/team-a/members/${manager.userId}`, { role: 'member' });
    const demoted = await manager.key.delete(`/v1/workspaces/team-a/members/${other.userId}`);
    expect(demoted.status).toBe(403);
    expect(demoted.body.error.code).toBe('ROLE_NOT_ALLOWED');
    await admin.put(`/v1/workspaces/team-a/members/${manager.userId}`, { role: 'manager' });
    expect((await manager.key.delete(`/v1/workspaces/team-a/members/${other.userId}`)).status).toBe(200);

    // Removing the manager from team-a revokes the keys they hold there.
    expect((await manager.key.get('/v1/workspaces/team-a')).status).toBe(200);
    expect((await admin.delete(`/v1/workspaces/team-a/members/${manager.userId}`)).status).toBe(200);
    const refused = await manager.key.get('/v1/workspaces/team-a');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_API_KEY');
  });

  it('refuses changes in an archived workspace', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    const ada = await join(t, admin, member('ada@example.test'));
    await admin.delete('/v1/workspaces/team-a');
    const archived = await admin.post('/v1/workspaces/team-a/members', { users: [{ id: ada.userId, role: 'member' }] });
    expect(archived.status).toBe(400);
    expect(archived.body.error.param).toBe('workspaceId');
    expect((await admin.get('/v1/workspaces/team-a/members')).status).toBe(200);
  });
});
