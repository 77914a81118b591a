import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

describe('API key authentication', () => {
  it('answers 401 for a missing, malformed, unknown or revoked key, and 200 for a good one', async () => {
    const t = await startTestServer();
    const anonymous = apiClient(t.baseUrl);
    const missing = await anonymous.get('/v1/workspaces');
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatchObject({ code: 'UNAUTHENTICATED', type: 'authentication_error' });
    expect(missing.headers.get('x-request-id')).toBeTruthy();

    expect((await apiClient(t.baseUrl, 'short').get('/v1/workspaces')).body.error.code).toBe('INVALID_API_KEY');
    expect((await apiClient(t.baseUrl, `svc-${'x'.repeat(43)}`).get('/v1/workspaces')).status).toBe(401);

    const admin = apiClient(t.baseUrl, t.adminKey);
    expect((await admin.get('/v1/workspaces')).status).toBe(200);

    const created = await admin.post('/v1/api-keys/organisation/service', { name: 'ci', scopes: ['workspaces.list'] });
    expect(created.status).toBe(200);
    const ci = apiClient(t.baseUrl, created.body.key);
    expect((await ci.get('/v1/workspaces')).status).toBe(200); // cached now
    expect((await admin.delete(`/v1/api-keys/${created.body.id}`)).status).toBe(200);
    const revoked = await ci.get('/v1/workspaces');
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.message).toMatch(/revoked/);
  });

  it('refuses an expired key once its time has passed', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/api-keys/organisation/service', {
      name: 'short-lived',
      scopes: ['workspaces.list'],
      expires_at: '2026-03-01T01:00:00Z',
    });
    expect(created.status).toBe(200);
    const key = apiClient(t.baseUrl, created.body.key);
    expect((await key.get('/v1/workspaces')).status).toBe(200);
    clock.advance(2 * 3600_000);
    const expired = await key.get('/v1/workspaces');
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toMatch(/expired/);
    expect(
      (
        await admin.post('/v1/api-keys/organisation/service', {
          name: 'past',
          scopes: [],
          expires_at: '2026-01-01T00:00:00Z',
        })
      ).status,
    ).toBe(400);
  });
});

describe('API key creation', () => {
  it('shows the raw key once, stores only a hash, and lists keys masked', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/api-keys/workspace/user', {
      name: 'app',
      workspace_id: 'default',
      scopes: ['completions.write'],
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ object: 'api-key' });
    expect(created.body.key).toMatch(/^svc-[A-Za-z0-9_-]{43}$/);

    const stored = await t.server.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(stored.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(created.body.key);

    const list = await admin.get('/v1/api-keys');
    expect(list.body).toMatchObject({ object: 'list', total: 2 });
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
    expect(JSON.stringify(list.body)).not.toContain(t.adminKey);
    const one = await admin.get(`/v1/api-keys/${created.body.id}`);
    expect(one.body).toMatchObject({
      id: created.body.id,
      type: 'workspace-user',
      scopes: ['completions.write'],
      status: 'active',
      last_reset_at: null,
    });
    expect(one.body.key).toMatch(/^svc-.{4}\*{4}.{4}$/);
    expect((await admin.get('/v1/api-keys/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('lists every scope with a description and rejects unknown ones', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const scopes = await admin.get('/v1/api-keys/scopes');
    const names = scopes.body.data.map((s: { name: string }) => s.name);
    for (const name of [
      'completions.write',
      'logs.export',
      'logs.list',
      'logs.view',
      'virtual_keys.create',
      'virtual_keys.update',
      'mcp.invoke',
      'rate_limits_policies.create',
    ]) {
      expect(names).toContain(name);
    }
    expect(scopes.body.data.every((s: { description: string }) => s.description.length > 5)).toBe(true);

    const bad = await admin.post('/v1/api-keys/organisation/service', {
      name: 'x',
      scopes: ['workspaces.list', 'logs.destroy'],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'UNKNOWN_SCOPE', param: 'scopes[1]' });
    const orgScopeOnWorkspaceKey = await admin.post('/v1/api-keys/workspace/user', {
      name: 'x',
      workspace_id: 'default',
      scopes: ['workspaces.create'],
    });
    expect(orgScopeOnWorkspaceKey.status).toBe(400);
    expect(orgScopeOnWorkspaceKey.body.error.param).toBe('scopes[0]');
  });

  it('validates the body: missing name, wrong types, unknown fields', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const cases: Array<[unknown, string]> = [
      [{ scopes: [] }, 'name'],
      [{ name: 'x', scopes: 'logs.list' }, 'scopes'],
      [{ name: 'x'.repeat(256), scopes: [] }, 'name'],
      [{ name: 'x', scopes: [], colour: 'red' }, 'body'],
      [{ name: 'x', scopes: [], expires_at: 'tomorrow' }, 'expires_at'],
    ];
    for (const [body, param] of cases) {
      const res = await admin.post('/v1/api-keys/organisation/service', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      expect(res.body.error.param).toBe(param);
    }
    const noWorkspace = await admin.post('/v1/api-keys/workspace/user', { name: 'x', scopes: [] });
    expect(noWorkspace.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'workspace_id' });
    const unknownWorkspace = await admin.post('/v1/api-keys/workspace/user', {
      name: 'x',
      scopes: [],
      workspace_id: 'nope',
    });
    expect(unknownWorkspace.status).toBe(404);
  });

  it('follows the role table: owners/admins make admin keys, managers make workspace keys in their own workspace only, members none', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const orgId = t.server.bootstrap.organisationId;
    const teamA = await createWorkspace(admin, 'Team A', 'team-a');
    const teamB = await createWorkspace(admin, 'Team B', 'team-b');
    const managerId = await addUser(t.server.db, orgId, 'member', [{ workspaceId: teamA.id, role: 'manager' }]);
    const memberId = await addUser(t.server.db, orgId, 'member', [{ workspaceId: teamA.id, role: 'member' }]);
    const keyScopes = ['workspace_user_api_keys.create', 'completions.write', 'rate_limits_policies.list'];
    const managerKey = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', user_id: managerId, scopes: keyScopes })).key,
    );
    const memberKey = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', user_id: memberId, scopes: keyScopes })).key,
    );

    // A workspace key can never create an admin key: wrong key type.
    const adminFromWorkspace = await managerKey.post('/v1/api-keys/organisation/service', { name: 'x', scopes: [] });
    expect(adminFromWorkspace.status).toBe(403);
    expect(adminFromWorkspace.body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');

    // The manager creates keys in team-a, also on behalf of the member, but not in team-b.
    const own = await managerKey.post('/v1/api-keys/workspace/user', {
      name: 'mine',
      workspace_id: 'team-a',
      scopes: ['completions.write'],
    });
    expect(own.status).toBe(200);
    const onBehalf = await managerKey.post('/v1/api-keys/workspace/user', {
      name: 'for member',
      workspace_id: teamA.id,
      scopes: ['completions.write'],
      user_id: memberId,
    });
    expect(onBehalf.status).toBe(200);
    expect((await admin.get(`/v1/api-keys/${onBehalf.body.id}`)).body.user_id).toBe(memberId);
    const otherWorkspace = await managerKey.post('/v1/api-keys/workspace/user', {
      name: 'x',
      workspace_id: teamB.slug,
      scopes: ['completions.write'],
    });
    expect(otherWorkspace.status).toBe(403);
    expect(otherWorkspace.body.error.code).toBe('WORKSPACE_FORBIDDEN');

    // No key grants a scope it does not hold.
    const escalate = await managerKey.post('/v1/api-keys/workspace/user', {
      name: 'x',
      workspace_id: 'team-a',
      scopes: ['logs.export'],
    });
    expect(escalate.status).toBe(403);
    expect(escalate.body.error.code).toBe('MISSING_SCOPE');

    // A member creates none.
    const byMember = await memberKey.post('/v1/api-keys/workspace/user', {
      name: 'x',
      workspace_id: 'team-a',
      scopes: ['completions.write'],
    });
    expect(byMember.status).toBe(403);
    expect(byMember.body.error.code).toBe('ROLE_NOT_ALLOWED');

    // A key without the scope a route needs gets 403 MISSING_SCOPE.
    const noScope = await apiClient(t.baseUrl, own.body.key).get('/v1/policies/rate-limits');
    expect(noScope.status).toBe(403);
    expect(noScope.body.error.code).toBe('MISSING_SCOPE');
  });

  it('gives workspace keys only their own workspace in listings', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['completions.write'] });
    const defaultKey = await createWorkspaceKey(admin, {
      workspace_id: 'default',
      scopes: ['workspace_user_api_keys.list'],
    });
    const listed = await apiClient(t.baseUrl, defaultKey.key).get('/v1/api-keys');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([defaultKey.id]);
    const other = await apiClient(t.baseUrl, defaultKey.key).get('/v1/api-keys?workspace_id=team-a');
    expect(other.status).toBe(403);
  });
});
