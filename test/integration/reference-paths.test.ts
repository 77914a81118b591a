import { describe, expect, it } from 'vitest';
import { WORKSPACE_SCOPES } from '../../src/auth/scopes.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

describe("the reference gateway's paths of users, invites, workspaces and members", () => {
  it('answer as the spec paths do, with the same resources, auth and audit', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);

    // A workspace made at the reference path is the one the spec path reads, and back.
    const made = await owner.post('/v1/admin/workspaces', { name: 'Reference team', slug: 'ref-team' });
    expect(made.status).toBe(200);
    expect((await owner.get('/v1/workspaces/ref-team')).body.id).toBe(made.body.id);
    const listed = await owner.get('/v1/admin/workspaces?page_size=100');
    expect(listed.body.data.map((w: { slug: string }) => w.slug)).toContain('ref-team');
    expect((await owner.put('/v1/admin/workspaces/ref-team', { description: 'renamed there' })).status).toBe(200);
    expect((await owner.get('/v1/workspaces/ref-team')).body.description).toBe('renamed there');

    // Members live under /users at the reference path.
    const userId = await addUser(t.server.db, t.server.bootstrap.organisationId, 'member');
    const added = await owner.post('/v1/admin/workspaces/ref-team/users', { users: [{ id: userId, role: 'member' }] });
    expect(added.status).toBe(200);
    expect((await owner.get(`/v1/workspaces/ref-team/members/${userId}`)).body.role).toBe('member');
    expect((await owner.put(`/v1/admin/workspaces/ref-team/users/${userId}`, { role: 'manager' })).status).toBe(200);
    const member = await owner.get(`/v1/admin/workspaces/ref-team/users/${userId}`);
    expect(member.body).toMatchObject({ object: 'workspace-user', id: userId, role: 'manager' });
    // The reference has no /members there: not a route, and not passed to a provider either.
    const wrong = await owner.get('/v1/admin/workspaces/ref-team/members');
    expect(wrong.status).toBe(404);
    expect(wrong.body.error.code).toBe('ROUTE_NOT_FOUND');

    // Users and invites.
    const users = await owner.get('/v1/admin/users');
    expect(users.body).toMatchObject({ object: 'list' });
    expect(users.body.data.map((u: { id: string }) => u.id)).toContain(userId);
    expect((await owner.get(`/v1/admin/users/${userId}`)).body.workspace_ids).toEqual([made.body.id]);
    const invite = await owner.post('/v1/admin/users/invites', {
      email: 'ada@example.test',
      role: 'member',
      workspaces: [{ id: 'ref-team', role: 'member' }],
    });
    expect(invite.status).toBe(200);
    expect(invite.body.invite_link).toContain('/v1/invites/accept?token=');
    expect((await owner.get(`/v1/admin/users/invites/${invite.body.id}`)).body.email).toBe('ada@example.test');
    const resent = await owner.post(`/v1/admin/users/invites/${invite.body.id}/resend`);
    expect(resent.body.inviteLink).toBe(resent.body.invite_link);
    expect((await owner.delete(`/v1/admin/users/invites/${invite.body.id}`)).status).toBe(200);
    expect((await owner.get(`/v1/invites/${invite.body.id}`)).body.status).toBe('cancelled');

    // The same authorization: a workspace key is refused the organisation's users at either path.
    const wsKey = await createWorkspaceKey(owner, { workspace_id: 'ref-team', scopes: [...WORKSPACE_SCOPES] });
    const ws = apiClient(t.baseUrl, wsKey.key);
    for (const path of ['/v1/users', '/v1/admin/users']) {
      const refused = await ws.get(path);
      expect(refused.status, path).toBe(403);
      expect(refused.body.error.code, path).toBe('KEY_TYPE_NOT_ALLOWED');
    }

    // Changes at the reference paths are audited, under the path that was called.
    const audit = await owner.get('/v1/audit-logs?resource_type=workspace&page_size=100');
    const paths = audit.body.data.map((r: { uri: string; method: string }) => `${r.method} ${r.uri}`);
    expect(paths).toEqual(expect.arrayContaining(['POST /v1/admin/workspaces', 'PUT /v1/admin/workspaces/ref-team']));

    // Archiving at the reference path archives the workspace.
    expect((await owner.delete('/v1/admin/workspaces/ref-team')).status).toBe(200);
    expect((await owner.get('/v1/workspaces/ref-team')).body.status).toBe('archived');
  });

  it('a workspace budget changed at the reference path applies to the next request', async () => {
    const g = await startGateway();
    const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 5 };
    await g.admin.post('/v1/admin/workspaces', {
      name: 'Budgeted',
      slug: 'budgeted',
      usage_limits: { credit_limit: 1, type: 'tokens' },
    });
    const key = apiClient(
      g.baseUrl,
      (await createWorkspaceKey(g.admin, { workspace_id: 'budgeted', scopes: ['completions.write'] })).key,
    );
    expect((await key.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(402);
    const raised = await g.admin.put('/v1/admin/workspaces/budgeted', {
      usage_limits: { credit_limit: 1_000_000, type: 'tokens' },
    });
    expect(raised.status).toBe(200);
    expect((await key.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
  });

  it('both routes are in the route table, with the same access', async () => {
    const t = await startTestServer();
    const find = (method: string, url: string) =>
      t.server.routes.find((route) => route.method === method && route.url === url);
    for (const [method, spec, reference] of [
      ['GET', '/v1/workspaces', '/v1/admin/workspaces'],
      ['DELETE', '/v1/workspaces/:workspaceId', '/v1/admin/workspaces/:workspaceId'],
      ['PUT', '/v1/workspaces/:workspaceId/members/:userId', '/v1/admin/workspaces/:workspaceId/users/:userId'],
      ['GET', '/v1/users', '/v1/admin/users'],
      ['POST', '/v1/invites/:inviteId/resend', '/v1/admin/users/invites/:inviteId/resend'],
    ] as const) {
      const a = find(method, spec);
      const b = find(method, reference);
      expect(a, `${method} ${spec}`).toBeDefined();
      expect(b, `${method} ${reference}`).toBeDefined();
      expect(b!.auth).toEqual(a!.auth);
      expect(b!.features).toEqual(a!.features);
    }
  });
});

describe('paging of users and invites in either spelling', () => {
  it('takes pageSize/currentPage (the reference) as page_size/current_page, and refuses two different values', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(owner, 'Paging', 'paging');
    for (let i = 0; i < 3; i++)
      await owner.post('/v1/invites', {
        email: `p${i}@example.test`,
        role: 'member',
        workspaces: [{ id: 'paging', role: 'member' }],
      });
    for (let i = 0; i < 2; i++) await addUser(t.server.db, t.server.bootstrap.organisationId, 'member');

    for (const base of ['/v1/invites', '/v1/admin/users/invites']) {
      const all = await owner.get(`${base}?page_size=100`);
      expect(all.body.total).toBe(3);
      const camel = await owner.get(`${base}?pageSize=2&currentPage=1`);
      expect(camel.status, base).toBe(200);
      expect(camel.body.total).toBe(3);
      expect(camel.body.data).toHaveLength(1);
      const snake = await owner.get(`${base}?page_size=2&current_page=1`);
      expect(snake.body.data).toEqual(camel.body.data);
    }
    const users = await owner.get('/v1/admin/users?pageSize=1&currentPage=2');
    expect(users.body.total).toBe(3); // the owner and the two added
    expect(users.body.data).toHaveLength(1);
    // The same value twice is harmless; two different values name the parameter.
    expect((await owner.get('/v1/users?pageSize=1&page_size=1')).body.data).toHaveLength(1);
    const conflict = await owner.get('/v1/users?pageSize=1&page_size=2');
    expect(conflict.status).toBe(400);
    expect(conflict.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'pageSize' });
    expect(conflict.body.error.message).toContain('pageSize and page_size are the same parameter');
    const bad = await owner.get('/v1/admin/users/invites?pageSize=-1');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('pageSize');
  });
});
