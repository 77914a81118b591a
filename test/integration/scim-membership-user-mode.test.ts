import { describe, expect, it } from 'vitest';
import { createWorkspace } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { createScimToken, expectScimError, GROUP_SCHEMA, patchOp, scimClient, USER_SCHEMA } from '../helpers/scim.js';
import { startTestServer } from '../helpers/start-test-server.js';

const groupsOf = (user: any) => (user.groups as Array<{ value: string }>).map((group) => group.value).sort();

describe('SCIM_MEMBERSHIP_USER_MODE=ON: group membership through the Users endpoint', () => {
  it('users carry groups and set them; member operations of a Groups PATCH are skipped', async () => {
    const t = await startTestServer({ env: { SCIM_MEMBERSHIP_USER_MODE: 'ON' } });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');
    const scim = scimClient(t.baseUrl, (await createScimToken(admin)).token);

    const eng = await scim.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Engineering' });
    const ops = await scim.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Ops' });
    await admin.post('/v1/scim/workspaces', { workspace_id: team.id, role: 'manager', scim_group_id: eng.body.id });

    // Created with its groups.
    const user = await scim.post('/Users', {
      schemas: [USER_SCHEMA],
      userName: 'dana@example.test',
      groups: [{ value: eng.body.id }],
    });
    expect(user.status).toBe(201);
    const id: string = user.body.id;
    expect(user.body.groups).toEqual([
      { value: eng.body.id, display: 'Engineering', $ref: `${t.baseUrl}/v1/scim/v2/Groups/${eng.body.id}` },
    ]);
    expect((await admin.get(`/v1/workspaces/team-a/members/${id}`)).body.role).toBe('manager');
    // Every user resource carries groups, also the ones in no group.
    const owner = (await scim.get('/Users')).body.Resources.find((u: any) => u.id !== id);
    expect(owner.groups).toEqual([]);

    // PATCH add and remove on the user's groups.
    const added = await scim.patch(
      `/Users/${id}`,
      patchOp({ op: 'add', path: 'groups', value: [{ value: ops.body.id }] }),
    );
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(groupsOf(added.body)).toEqual([eng.body.id, ops.body.id].sort());
    const removed = await scim.patch(
      `/Users/${id}`,
      patchOp({ op: 'remove', path: `groups[value eq "${eng.body.id}"]` }),
    );
    expect(groupsOf(removed.body)).toEqual([ops.body.id]);
    expect((await admin.get(`/v1/workspaces/team-a/members/${id}`)).status).toBe(404);
    // The group shows the membership the user endpoint made.
    expect((await scim.get(`/Groups/${ops.body.id}`)).body.members.map((m: any) => m.value)).toEqual([id]);
    expectScimError(
      await scim.patch(`/Users/${id}`, patchOp({ op: 'add', path: 'groups', value: [{ value: 'no-such-group' }] })),
      400,
      'invalidValue',
    );

    // Member operations on Groups are skipped; the rest of the PATCH applies.
    const skipped = await scim.patch(
      `/Groups/${eng.body.id}`,
      patchOp(
        { op: 'add', path: 'members', value: [{ value: id }] },
        { op: 'replace', value: { displayName: 'Engineering EU', members: [{ value: id }] } },
      ),
    );
    expect(skipped.status).toBe(200);
    expect(skipped.body).toMatchObject({ displayName: 'Engineering EU', members: [] });
    expect((await admin.get(`/v1/workspaces/team-a/members/${id}`)).status).toBe(404);
    // Members given on a group create are ignored too.
    const withMembers = await scim.post('/Groups', {
      schemas: [GROUP_SCHEMA],
      displayName: 'Sales',
      members: [{ value: id }],
    });
    expect(withMembers.body.members).toEqual([]);

    // PUT of the user with its groups replaces them.
    const put = await scim.put(`/Users/${id}`, {
      schemas: [USER_SCHEMA],
      userName: 'dana@example.test',
      groups: [{ value: eng.body.id }, { value: withMembers.body.id }],
    });
    expect(groupsOf(put.body)).toEqual([eng.body.id, withMembers.body.id].sort());
    expect((await admin.get(`/v1/workspaces/team-a/members/${id}`)).body.role).toBe('manager');
  });

  it('without user mode, users carry no groups and Groups PATCH manages members', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const scim = scimClient(t.baseUrl, (await createScimToken(admin)).token);
    const group = await scim.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Engineering' });
    const user = await scim.post('/Users', {
      schemas: [USER_SCHEMA],
      userName: 'eve@example.test',
      groups: [{ value: group.body.id }], // read-only here: ignored, as RFC 7643 says
    });
    expect(user.status).toBe(201);
    expect(user.body.groups).toBeUndefined();
    expect((await scim.get(`/Groups/${group.body.id}`)).body.members).toEqual([]);
    const patched = await scim.patch(
      `/Groups/${group.body.id}`,
      patchOp({ op: 'add', path: 'members', value: [{ value: user.body.id }] }),
    );
    expect(patched.body.members.map((m: any) => m.value)).toEqual([user.body.id]);
    expect((await scim.get(`/Users/${user.body.id}`)).body.groups).toBeUndefined();
  });
});
