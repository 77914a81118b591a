import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
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

describe('workspaces: create, read, update', () => {
  it('creates and reads a workspace; last_reset_at follows the usage period', async () => {
    const clock = createManualClock(Date.parse('2026-05-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/workspaces', {
      name: 'Team A',
      slug: 'team-a',
      description: 'the A team',
      usage_limits: { credit_limit: 10, type: 'cost' },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'workspace',
      slug: 'team-a',
      name: 'Team A',
      description: 'the A team',
      status: 'active',
      is_default: false,
      last_reset_at: null,
      organisation_id: t.server.bootstrap.organisationId,
    });
    expect((await admin.post('/v1/workspaces', { name: 'Again', slug: 'team-a' })).status).toBe(409);

    clock.advance(3_600_000);
    expect((await admin.put('/v1/workspaces/team-a', { name: 'Team Alpha', reset_usage: true })).status).toBe(200);
    const read = await admin.get(`/v1/workspaces/${created.body.id}`);
    expect(read.body).toMatchObject({
      name: 'Team Alpha',
      last_reset_at: '2026-05-01T01:00:00.000Z',
      usage_limits: [{ credit_limit: 10, last_reset_at: '2026-05-01T01:00:00.000Z', current_usage: 0 }],
    });

    expect((await admin.put('/v1/workspaces/team-a', {})).status).toBe(400);
    expect((await admin.put('/v1/workspaces/team-a', { colour: 'red' })).body.error.param).toBe('body');
    expect((await admin.get('/v1/workspaces/nope')).status).toBe(404);
    expect((await admin.put('/v1/workspaces/nope', { name: 'x' })).status).toBe(404);
  });

  it('lets a workspace key list and read its own workspace only', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');
    await createWorkspace(admin, 'Team B', 'team-b');
    expect((await admin.get('/v1/workspaces')).body.total).toBe(3);

    const key = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['workspaces.read'] })).key,
    );
    const listed = await key.get('/v1/workspaces');
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ object: 'list', total: 1 });
    expect(listed.body.data.map((w: { id: string }) => w.id)).toEqual([team.id]);
    expect((await key.get('/v1/workspaces?current_page=1&page_size=1')).body).toMatchObject({ total: 1, data: [] });
    expect((await key.get('/v1/workspaces/team-b')).status).toBe(403);
    expect((await key.post('/v1/workspaces', { name: 'x' })).body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');

    // Archived workspaces are listed to owners and admins only.
    const member = await join(t, admin, {
      email: 'm@example.test',
      role: 'member',
      workspaces: [{ id: 'team-a', role: 'member' }],
    });
    const refused = await member.key.get('/v1/workspaces?status=archived');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'ROLE_NOT_ALLOWED', param: 'status' });
    const noScope = await apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['completions.write'] })).key,
    ).get('/v1/workspaces');
    expect(noScope.status).toBe(403);
    expect(noScope.body.error.code).toBe('MISSING_SCOPE');
    expect((await apiClient(t.baseUrl).get('/v1/workspaces')).status).toBe(401);
  });
});

describe('workspaces: archive and unarchive', () => {
  it('archiving refuses the workspace’s keys everywhere (gateway too) without revoking them; unarchiving brings them back', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');
    const created = await createWorkspaceKey(admin, {
      workspace_id: 'team-a',
      scopes: ['workspaces.read', 'workspace_user_api_keys.list', 'completions.write'],
    });
    const key = apiClient(t.baseUrl, created.key);
    expect((await key.get('/v1/workspaces/team-a')).status).toBe(200);
    expect((await key.get('/v1/api-keys')).status).toBe(200);
    const beforeGateway = await key.post('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(beforeGateway.status).not.toBe(401);

    const archived = await admin.delete('/v1/workspaces/team-a');
    expect(archived.status).toBe(200);
    expect(archived.body).toEqual({});
    for (const call of [
      () => key.get('/v1/workspaces/team-a'),
      () => key.get('/v1/api-keys'),
      () => key.post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    ]) {
      const refused = await call();
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('WORKSPACE_ARCHIVED');
    }
    // Nothing was revoked; the workspace is read-only and listed as archived to admins.
    expect((await admin.get(`/v1/api-keys/${created.id}`)).body.status).toBe('active');
    expect((await admin.get('/v1/workspaces/team-a')).body.status).toBe('archived');
    expect((await admin.get('/v1/workspaces')).body.data.map((w: { slug: string }) => w.slug)).toEqual(['default']);
    expect((await admin.get('/v1/workspaces?status=archived')).body.data.map((w: { id: string }) => w.id)).toEqual([
      team.id,
    ]);
    expect((await admin.get('/v1/workspaces?status=active,archived')).body.total).toBe(2);
    const update = await admin.put('/v1/workspaces/team-a', { name: 'x' });
    expect(update.status).toBe(400);
    expect(update.body.error.param).toBe('workspaceId');
    expect(
      (await admin.post('/v1/api-keys/workspace/user', { name: 'x', workspace_id: 'team-a', scopes: [] })).status,
    ).toBe(400);
    const invite = await admin.post('/v1/invites', {
      email: 'a@example.test',
      role: 'member',
      workspaces: [{ id: 'team-a', role: 'member' }],
    });
    expect(invite.status).toBe(400);
    expect(invite.body.error.param).toBe('workspaces[0].id');
    expect((await admin.delete('/v1/workspaces/team-a')).status).toBe(200);

    const restored = await admin.post(`/v1/workspaces/${team.id}/unarchive`);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: team.id, status: 'active', object: 'workspace' });
    expect((await key.get('/v1/workspaces/team-a')).status).toBe(200);

    const actions = await t.server.db
      .selectFrom('audit_logs')
      .select('action')
      .where('resource_type', '=', 'workspace')
      .where('resource_id', '=', team.id)
      .orderBy('seq')
      .execute();
    expect(actions.map((a) => a.action)).toEqual(['create', 'archive', 'archive', 'unarchive']);
  });

  it('keeps the default workspace, and lets only owners and admins archive with an admin key', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    const refused = await admin.delete('/v1/workspaces/default');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'workspaceId' });
    expect((await admin.delete('/v1/workspaces/nope')).status).toBe(404);
    expect((await admin.post('/v1/workspaces/nope/unarchive')).status).toBe(404);

    const workspaceKey = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['workspaces.read'] })).key,
    );
    expect((await workspaceKey.delete('/v1/workspaces/team-a')).body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');

    const ada = await join(t, admin, { email: 'ada@example.test', role: 'admin' });
    await admin.put(`/v1/users/${ada.userId}`, { role: 'member' });
    const demoted = await ada.key.delete('/v1/workspaces/team-a');
    expect(demoted.status).toBe(403);
    expect(demoted.body.error.code).toBe('ROLE_NOT_ALLOWED');
    const noScope = apiClient(
      t.baseUrl,
      (await admin.post('/v1/api-keys/organisation/service', { name: 'ro', scopes: ['workspaces.list'] })).body.key,
    );
    expect((await noScope.delete('/v1/workspaces/team-a')).body.error.code).toBe('MISSING_SCOPE');
    expect((await apiClient(t.baseUrl).delete('/v1/workspaces/team-a')).status).toBe(401);
  });
});
