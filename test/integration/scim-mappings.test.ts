import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import {
  createScimToken,
  expectScimError,
  GROUP_SCHEMA,
  insertScimToken,
  patchOp,
  scimClient,
  USER_SCHEMA,
} from '../helpers/scim.js';
import { startTestServer } from '../helpers/start-test-server.js';

const scimUser = (email: string) => ({
  schemas: [USER_SCHEMA],
  userName: email,
  emails: [{ value: email, primary: true }],
});
const scimGroup = (displayName: string, members: string[] = []) => ({
  schemas: [GROUP_SCHEMA],
  displayName,
  members: members.map((value) => ({ value })),
});

describe('SCIM group to workspace mappings (/v1/scim/workspaces)', () => {
  it('lists, creates and archives mappings in the reference shapes, and refuses bad ones', async () => {
    // Lists are in creation order: the manual clock keeps every creation in a moment of its own.
    const clock = createManualClock(Date.parse('2026-06-01T09:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const a = await createWorkspace(admin, 'Team A', 'team-a');
    const b = await createWorkspace(admin, 'Team B', 'team-b');
    const scim = scimClient(t.baseUrl, (await createScimToken(admin)).token);
    const sales = await scim.post('/Groups', scimGroup('Sales'));

    const byId = await admin.post('/v1/scim/workspaces', {
      workspace_id: a.id,
      role: 'admin',
      scim_group_id: sales.body.id,
    });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({
      id: expect.any(String),
      workspace_id: a.id,
      scim_group: 'Sales',
      scim_group_id: sales.body.id,
      role: 'admin',
    });
    clock.advance(1000);
    // By name: an existing group is linked at once (the name matches without regard to case).
    const byName = await admin.post('/v1/scim/workspaces', {
      workspace_id: 'team-b',
      role: 'member',
      scim_group_name: 'sales',
    });
    expect(byName.body).toMatchObject({ workspace_id: b.id, scim_group: 'Sales', scim_group_id: sales.body.id });
    clock.advance(1000);
    const pending = await admin.post('/v1/scim/workspaces', {
      workspace_id: 'team-b',
      role: 'manager',
      scim_group_name: 'Later',
    });
    expect(pending.body).toMatchObject({ scim_group: 'Later', scim_group_id: null });

    const all = await admin.get('/v1/scim/workspaces');
    expect(all.status).toBe(200);
    expect(all.body.total_count).toBe(3);
    expect(all.body.mappings.map((m: any) => m.id)).toEqual([byId.body.id, byName.body.id, pending.body.id]);
    expect((await admin.get('/v1/scim/workspaces?workspace_id=team-b')).body.total_count).toBe(2);
    expect((await admin.get(`/v1/scim/workspaces?scim_group_id=${sales.body.id}`)).body.total_count).toBe(2);
    expect((await admin.get('/v1/scim/workspaces?role=manager')).body.mappings.map((m: any) => m.id)).toEqual([
      pending.body.id,
    ]);

    const bad = async (body: unknown, status: number, param: string) => {
      const res = await admin.post('/v1/scim/workspaces', body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error.param).toBe(param);
    };
    await bad({ workspace_id: a.id, role: 'admin' }, 400, 'scim_group_id');
    await bad(
      { workspace_id: a.id, role: 'admin', scim_group_id: sales.body.id, scim_group_name: 'Sales' },
      400,
      'scim_group_id',
    );
    await bad({ workspace_id: a.id, role: 'owner', scim_group_id: sales.body.id }, 400, 'role');
    await bad({ workspace_id: 'nope', role: 'admin', scim_group_id: sales.body.id }, 404, 'workspace_id');
    await bad({ workspace_id: a.id, role: 'admin', scim_group_id: randomUUID() }, 404, 'scim_group_id');
    await bad({ workspace_id: a.id, role: 'member', scim_group_id: sales.body.id }, 409, 'scim_group_id');
    await bad({ workspace_id: 'team-b', role: 'admin', scim_group_name: 'LATER' }, 409, 'scim_group_name');
    await bad({ workspace_id: a.id, role: 'admin', scim_group_id: sales.body.id, extra: 1 }, 400, 'body');
    const archived = await admin.delete(`/v1/workspaces/${b.id}`);
    expect(archived.status).toBe(200);
    await bad({ workspace_id: b.id, role: 'admin', scim_group_name: 'Other' }, 400, 'workspace_id');

    const removed = await admin.delete(`/v1/scim/workspaces/${pending.body.id}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ success: true });
    expect((await admin.get('/v1/scim/workspaces')).body.total_count).toBe(2);
    expect((await admin.delete(`/v1/scim/workspaces/${pending.body.id}`)).status).toBe(404);
    expect((await admin.delete('/v1/scim/workspaces/not-an-id')).status).toBe(404);

    // Organisation owners and admins only, with an admin key.
    const member = await addUser(t.server.db, t.server.bootstrap.organisationId, 'member', [
      { workspaceId: a.id, role: 'admin' },
    ]);
    const wsKey = await createWorkspaceKey(admin, { workspace_id: a.id, user_id: member, scopes: ['workspaces.read'] });
    const refused = await apiClient(t.baseUrl, wsKey.key).get('/v1/scim/workspaces');
    expect(refused.body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');
  });

  it('grants the highest mapped role, follows group changes, and never touches memberships made by hand', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');
    const other = await createWorkspace(admin, 'Team B', 'team-b');
    const scim = scimClient(t.baseUrl, (await createScimToken(admin)).token);
    const ann = (await scim.post('/Users', scimUser('ann@example.test'))).body.id as string;
    const ben = (await scim.post('/Users', scimUser('ben@example.test'))).body.id as string;
    const readers = (await scim.post('/Groups', scimGroup('Readers', [ann, ben]))).body.id as string;
    const leads = (await scim.post('/Groups', scimGroup('Leads', [ann]))).body.id as string;

    // Ben was a member of Team B by hand before SCIM came along.
    await admin.post('/v1/workspaces/team-b/members', { users: [{ id: ben, role: 'member' }] });

    await admin.post('/v1/scim/workspaces', { workspace_id: team.id, role: 'member', scim_group_id: readers });
    const leadsMapping = await admin.post('/v1/scim/workspaces', {
      workspace_id: team.id,
      role: 'admin',
      scim_group_id: leads,
    });
    await admin.post('/v1/scim/workspaces', { workspace_id: other.id, role: 'admin', scim_group_id: readers });

    const roleIn = async (workspace: string, user: string) => {
      const res = await admin.get(`/v1/workspaces/${workspace}/members/${user}`);
      return res.status === 404 ? null : (res.body.role as string);
    };
    expect(await roleIn('team-a', ann)).toBe('admin'); // Readers (member) and Leads (admin): the higher wins
    expect(await roleIn('team-a', ben)).toBe('member');
    expect(await roleIn('team-b', ann)).toBe('admin');
    expect(await roleIn('team-b', ben)).toBe('member'); // made by hand: SCIM leaves it as it is

    const annKey = await createWorkspaceKey(admin, {
      workspace_id: team.id,
      user_id: ann,
      scopes: ['workspace_users.list', 'workspace_users.create'],
    });
    const annClient = apiClient(t.baseUrl, annKey.key);
    expect((await annClient.get(`/v1/workspaces/${team.id}/members`)).status).toBe(200);

    // Leaving Leads: the role drops to what Readers gives, and the key acts with it at once.
    await scim.patch(`/Groups/${leads}`, patchOp({ op: 'remove', path: `members[value eq "${ann}"]` }));
    expect(await roleIn('team-a', ann)).toBe('member');
    const demoted = await annClient.post(`/v1/workspaces/${team.id}/members`, { users: [{ id: ben, role: 'member' }] });
    expect(demoted.body.error.code).toBe('ROLE_NOT_ALLOWED');

    // Archiving the Readers → Team B mapping ends what it granted, and only that.
    const mappings = (await admin.get('/v1/scim/workspaces?workspace_id=team-b')).body.mappings;
    await admin.delete(`/v1/scim/workspaces/${mappings[0].id}`);
    expect(await roleIn('team-b', ann)).toBeNull();
    expect(await roleIn('team-b', ben)).toBe('member');

    // Deleting the group ends the last SCIM membership of Ann; her key in that workspace is revoked.
    expect((await scim.delete(`/Groups/${readers}`)).status).toBe(204);
    expect(await roleIn('team-a', ann)).toBeNull();
    expect(await roleIn('team-a', ben)).toBeNull();
    expect((await annClient.get(`/v1/workspaces/${team.id}/members`)).status).toBe(401);
    // Archiving a mapping whose group is gone is fine too.
    expect((await admin.delete(`/v1/scim/workspaces/${leadsMapping.body.id}`)).body).toEqual({ success: true });
  });

  it('organisations are walls: a SCIM token and the mappings see their own organisation only', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const scim = scimClient(t.baseUrl, (await createScimToken(admin)).token);
    // Another organisation in the same database, with a user, a workspace and a SCIM group.
    const db = t.server.db;
    const stamp = new Date().toISOString();
    const other = { org: randomUUID(), user: randomUUID(), workspace: randomUUID(), group: randomUUID() };
    await db
      .insertInto('organisations')
      .values({ id: other.org, name: 'Other', created_at: stamp, last_updated_at: stamp })
      .execute();
    await db
      .insertInto('users')
      .values({
        id: other.user,
        organisation_id: other.org,
        email: 'x@other.example',
        first_name: null,
        last_name: null,
        role: 'member',
        created_at: stamp,
        last_updated_at: stamp,
      })
      .execute();
    await db
      .insertInto('workspaces')
      .values({
        id: other.workspace,
        organisation_id: other.org,
        slug: 'elsewhere',
        name: 'Elsewhere',
        description: null,
        status: 'active',
        is_default: 0,
        created_at: stamp,
        last_updated_at: stamp,
      })
      .execute();
    await db
      .insertInto('scim_groups')
      .values({
        id: other.group,
        organisation_id: other.org,
        display_name: 'Theirs',
        external_id: null,
        created_at: stamp,
        last_updated_at: stamp,
      })
      .execute();

    expectScimError(await scim.get(`/Users/${other.user}`), 404);
    expectScimError(
      await scim.patch(`/Users/${other.user}`, patchOp({ op: 'replace', path: 'active', value: false })),
      404,
    );
    expectScimError(await scim.delete(`/Users/${other.user}`), 404);
    expectScimError(await scim.get(`/Groups/${other.group}`), 404);
    expect(
      (await scim.get(`/Users${'?filter=' + encodeURIComponent('userName eq "x@other.example"')}`)).body.totalResults,
    ).toBe(0);
    expect((await scim.get('/Groups')).body.totalResults).toBe(0);
    // The same display name is free here; a member from the other organisation is unknown.
    const ours = await scim.post('/Groups', scimGroup('Theirs'));
    expect(ours.status).toBe(201);
    expectScimError(
      await scim.patch(
        `/Groups/${ours.body.id}`,
        patchOp({ op: 'add', path: 'members', value: [{ value: other.user }] }),
      ),
      400,
      'invalidValue',
    );
    // Mappings cannot name the other organisation's workspace or group.
    expect(
      (
        await admin.post('/v1/scim/workspaces', {
          workspace_id: other.workspace,
          role: 'member',
          scim_group_id: ours.body.id,
        })
      ).status,
    ).toBe(404);
    expect(
      (await admin.post('/v1/scim/workspaces', { workspace_id: 'default', role: 'member', scim_group_id: other.group }))
        .status,
    ).toBe(404);
    expect(
      (await db.selectFrom('users').select('deactivated_at').where('id', '=', other.user).executeTakeFirstOrThrow())
        .deactivated_at,
    ).toBeNull();
  });

  it('SCIM tokens: shown once, listed without the secret, refused at once when revoked or expired', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T09:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/scim/tokens', { name: 'Okta' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ object: 'scim_token', name: 'Okta', status: 'active', expires_at: null });
    expect(created.body.token).toMatch(/^scim-[A-Za-z0-9_-]{43}$/);
    const listed = await admin.get('/v1/scim/tokens');
    expect(listed.body).toMatchObject({ object: 'list', total: 1 });
    expect(listed.body.data[0].token).toBeUndefined();
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
    expect(listed.body.data[0].token_hint).toBe(`${created.body.token.slice(0, 9)}****${created.body.token.slice(-4)}`);
    const audit = await admin.get('/v1/audit-logs?page_size=100');
    expect(JSON.stringify(audit.body)).not.toContain(created.body.token);

    const scim = scimClient(t.baseUrl, created.body.token);
    expect((await scim.get('/Users')).status).toBe(200);
    expect((await admin.delete(`/v1/scim/tokens/${created.body.id}`)).body).toEqual({});
    expectScimError(await scim.get('/Users'), 401);
    expect((await admin.get('/v1/scim/tokens')).body.data[0]).toMatchObject({ status: 'revoked' });
    expect((await admin.delete(`/v1/scim/tokens/${randomUUID()}`)).status).toBe(404);

    const expiring = await admin.post('/v1/scim/tokens', { name: 'Entra', expires_at: '2026-06-02T09:00:00Z' });
    const second = scimClient(t.baseUrl, expiring.body.token);
    expect((await second.get('/Groups')).status).toBe(200);
    clock.advance(25 * 3600_000);
    const expired = await second.get('/Groups');
    expectScimError(expired, 401);
    expect(expired.body.detail).toBe('The SCIM token has expired.');
    expect((await admin.post('/v1/scim/tokens', { name: 'past', expires_at: '2020-01-01T00:00:00Z' })).status).toBe(
      400,
    );
    expect((await admin.post('/v1/scim/tokens', {})).status).toBe(400);
  });

  it('SCIM_ENABLED=OFF turns every SCIM route off, after the token is checked', async () => {
    const t = await startTestServer({ env: { SCIM_ENABLED: 'OFF' } });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const tokens = await admin.post('/v1/scim/tokens', { name: 'Okta' });
    expect(tokens.status).toBe(403);
    expect(tokens.body.error).toMatchObject({
      code: 'FEATURE_DISABLED',
      message: 'The SCIM provisioning feature (scim) is turned off on this deployment (SCIM_ENABLED=OFF).',
    });
    expect((await admin.get('/v1/scim/workspaces')).body.error.code).toBe('FEATURE_DISABLED');
    // A token made while the feature was on still authenticates, and then meets the flag.
    const token = await insertScimToken(t.server.db, t.server.bootstrap.organisationId);
    const off = await scimClient(t.baseUrl, token).get('/Users');
    expectScimError(off, 403);
    expect(off.body.detail).toContain('SCIM_ENABLED=OFF');
    expectScimError(await scimClient(t.baseUrl, null).get('/ServiceProviderConfig'), 401);
  });
});
