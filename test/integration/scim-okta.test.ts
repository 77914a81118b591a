import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import {
  createScimToken,
  expectScimError,
  filterQuery,
  GROUP_SCHEMA,
  patchOp,
  scimClient,
  USER_SCHEMA,
} from '../helpers/scim.js';
import { sharedInstancesEnv } from '../helpers/postgres.js';
import { postgresAvailable, redisAvailable } from '../helpers/services.js';
import { startTestServer } from '../helpers/start-test-server.js';

const hasServices = (await postgresAvailable()) && (await redisAvailable());

/** The user Okta creates when the app is assigned (its documented SCIM 2.0 create request). */
const oktaUser = (email: string, given: string, family: string, externalId: string) => ({
  schemas: [USER_SCHEMA],
  userName: email,
  name: { givenName: given, familyName: family },
  emails: [{ primary: true, value: email, type: 'work' }],
  displayName: `${given} ${family}`,
  locale: 'en-US',
  externalId,
  groups: [],
  password: 'Okta-generated-Pa55word!',
  active: true,
});

describe('SCIM as Okta sends it', () => {
  it('provisions, finds, deactivates, reactivates and updates a user; pushes a group that grants a workspace', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');
    // The mapping comes first, by name: Okta pushes the group later.
    const mapping = await admin.post('/v1/scim/workspaces', {
      workspace_id: 'team-a',
      role: 'manager',
      scim_group_name: 'Engineering',
    });
    expect(mapping.status).toBe(200);
    expect(mapping.body).toMatchObject({
      workspace_id: team.id,
      scim_group: 'Engineering',
      scim_group_id: null,
      role: 'manager',
    });

    const { token } = await createScimToken(admin, 'Okta');
    // Okta sends JSON as application/json; both content types are accepted.
    const okta = scimClient(t.baseUrl, token, 'application/json');

    // "Test connector configuration" reads the service provider's capabilities.
    const config = await okta.get('/ServiceProviderConfig');
    expect(config.status).toBe(200);
    expect(config.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    expect(config.body).toMatchObject({
      patch: { supported: true },
      filter: { supported: true },
      etag: { supported: true },
    });

    // Import looks the user up by userName before creating them.
    const lookup = await okta.get(
      `/Users${filterQuery('userName eq "john.doe@example.test"', 'startIndex=1&count=100')}`,
    );
    expect(lookup.status).toBe(200);
    expect(lookup.body).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });

    const created = await okta.post('/Users', oktaUser('john.doe@example.test', 'John', 'Doe', '00u1abcd'));
    expect(created.status).toBe(201);
    const userId: string = created.body.id;
    expect(created.headers.get('location')).toBe(`${t.baseUrl}/v1/scim/v2/Users/${userId}`);
    expect(created.headers.get('etag')).toBe(created.body.meta.version);
    expect(created.body).toMatchObject({
      schemas: [USER_SCHEMA],
      id: userId,
      externalId: '00u1abcd',
      userName: 'john.doe@example.test',
      name: { givenName: 'John', familyName: 'Doe' },
      displayName: 'John Doe',
      locale: 'en-US',
      emails: [{ primary: true, value: 'john.doe@example.test', type: 'work' }],
      active: true,
      meta: { resourceType: 'User', location: `${t.baseUrl}/v1/scim/v2/Users/${userId}` },
    });
    expect(JSON.stringify(created.body)).not.toContain('Pa55word');
    expect(created.body.groups).toBeUndefined(); // only with SCIM_MEMBERSHIP_USER_MODE=ON

    // The person is an svcgw user now, an organisation member.
    const asUser = await admin.get(`/v1/users/${userId}`);
    expect(asUser.body).toMatchObject({
      email: 'john.doe@example.test',
      first_name: 'John',
      last_name: 'Doe',
      role: 'member',
    });

    const found = await okta.get(`/Users${filterQuery('userName eq "JOHN.DOE@example.test"')}`);
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0].id).toBe(userId);
    const read = await okta.get(`/Users/${userId}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);

    // Group push, with the member: the waiting mapping links and grants the workspace.
    const group = await okta.post('/Groups', {
      schemas: [GROUP_SCHEMA],
      displayName: 'Engineering',
      members: [{ value: userId, display: 'john.doe@example.test' }],
    });
    expect(group.status).toBe(201);
    const groupId: string = group.body.id;
    expect(group.body).toMatchObject({
      schemas: [GROUP_SCHEMA],
      displayName: 'Engineering',
      members: [{ value: userId, display: 'john.doe@example.test', type: 'User' }],
      meta: { resourceType: 'Group' },
    });
    const mappings = await admin.get('/v1/scim/workspaces');
    expect(mappings.body).toEqual({
      mappings: [
        {
          id: mapping.body.id,
          workspace_id: team.id,
          scim_group: 'Engineering',
          scim_group_id: groupId,
          role: 'manager',
        },
      ],
      total_count: 1,
    });
    const membership = await admin.get(`/v1/workspaces/team-a/members/${userId}`);
    expect(membership.status).toBe(200);
    expect(membership.body.role).toBe('manager');

    // A key of theirs works until they are deactivated, and is refused right after.
    const key = await createWorkspaceKey(admin, {
      workspace_id: team.id,
      user_id: userId,
      scopes: ['workspaces.read'],
    });
    const theirs = apiClient(t.baseUrl, key.key);
    expect((await theirs.get(`/v1/workspaces/${team.id}`)).status).toBe(200);

    const deactivated = await okta.call(
      'PATCH',
      `/Users/${userId}`,
      patchOp({ op: 'replace', value: { active: false } }),
    );
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.active).toBe(false);
    const refused = await theirs.get(`/v1/workspaces/${team.id}`);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({
      code: 'INVALID_API_KEY',
      message: "The API key's user is deactivated.",
    });
    expect((await okta.get(`/Users${filterQuery('active eq false')}`)).body.Resources.map((u: any) => u.id)).toEqual([
      userId,
    ]);

    // Reactivation gives the same key back: deactivation suspends, it does not revoke.
    const reactivated = await okta.call(
      'PATCH',
      `/Users/${userId}`,
      patchOp({ op: 'replace', value: { active: true } }),
    );
    expect(reactivated.body.active).toBe(true);
    expect((await theirs.get(`/v1/workspaces/${team.id}`)).status).toBe(200);

    // Profile updates come as PUT of the whole user.
    const put = await okta.put(`/Users/${userId}`, {
      ...oktaUser('john.doe@example.test', 'Johnny', 'Doe', '00u1abcd'),
      id: userId,
      emails: [{ primary: true, value: 'johnny@example.test', type: 'work' }],
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      name: { givenName: 'Johnny' },
      emails: [{ value: 'johnny@example.test' }],
      active: true,
    });
    expect((await admin.get(`/v1/users/${userId}`)).body).toMatchObject({
      email: 'johnny@example.test',
      first_name: 'Johnny',
    });

    // Group rename, as Okta sends it (replace with a value object carrying the id).
    const renamed = await okta.call(
      'PATCH',
      `/Groups/${groupId}`,
      patchOp({ op: 'replace', value: { id: groupId, displayName: 'Engineering EU' } }),
    );
    expect(renamed.status).toBe(200);
    expect(renamed.body.displayName).toBe('Engineering EU');
    expect((await admin.get('/v1/scim/workspaces')).body.mappings[0].scim_group).toBe('Engineering EU');
    expect((await admin.get(`/v1/workspaces/team-a/members/${userId}`)).status).toBe(200);

    // Removing the member ends the membership the group granted, and the user's keys in it.
    const removed = await okta.call(
      'PATCH',
      `/Groups/${groupId}`,
      patchOp({ op: 'remove', path: `members[value eq "${userId}"]` }),
    );
    expect(removed.status).toBe(200);
    expect(removed.body.members).toEqual([]);
    expect((await admin.get(`/v1/workspaces/team-a/members/${userId}`)).status).toBe(404);
    expect((await theirs.get(`/v1/workspaces/${team.id}`)).status).toBe(401);

    // Adding them back grants the membership again.
    const added = await okta.call(
      'PATCH',
      `/Groups/${groupId}`,
      patchOp({ op: 'add', path: 'members', value: [{ value: userId, display: 'johnny@example.test' }] }),
    );
    expect(added.body.members.map((m: any) => m.value)).toEqual([userId]);
    expect((await admin.get(`/v1/workspaces/team-a/members/${userId}`)).body.role).toBe('manager');

    // Deleting the group ends what it granted; its mapping waits under its name for it to come back.
    expect((await okta.delete(`/Groups/${groupId}`)).status).toBe(204);
    expect((await admin.get(`/v1/workspaces/team-a/members/${userId}`)).status).toBe(404);
    expect((await admin.get('/v1/scim/workspaces')).body.mappings[0]).toMatchObject({
      scim_group: 'Engineering EU',
      scim_group_id: null,
    });
    expectScimError(await okta.get(`/Groups/${groupId}`), 404);

    // Every change was audited as made by the SCIM token, and no password reached the record.
    const audit = await admin.get('/v1/audit-logs?page_size=100');
    const scimRecords = audit.body.data.filter((r: any) => String(r.resource_type).startsWith('scim_'));
    expect(scimRecords.length).toBeGreaterThanOrEqual(8);
    expect(JSON.stringify(audit.body)).not.toContain('Pa55word');
  });

  it('pages the user list with startIndex and count, and imports groups', async () => {
    // Lists are in creation order: the manual clock keeps every creation in a moment of its own.
    const clock = createManualClock(Date.parse('2026-06-01T09:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const okta = scimClient(t.baseUrl, (await createScimToken(admin)).token, 'application/json');
    for (let i = 1; i <= 4; i++) {
      clock.advance(1000);
      const res = await okta.post('/Users', oktaUser(`user${i}@example.test`, `User${i}`, 'Test', `00u${i}`));
      expect(res.status).toBe(201);
    }
    // The owner made at bootstrap is a user too: 5 in all, shown with their e-mail as userName.
    const all = await okta.get('/Users?startIndex=1&count=100');
    expect(all.body.totalResults).toBe(5);
    expect(all.body.Resources[0].userName).toMatch(/@/);
    const page = await okta.get('/Users?startIndex=2&count=2');
    expect(page.body).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect(page.body.Resources.map((u: any) => u.userName)).toEqual(['user1@example.test', 'user2@example.test']);
    const last = await okta.get('/Users?startIndex=5&count=2');
    expect(last.body.itemsPerPage).toBe(1);
    const beyond = await okta.get('/Users?startIndex=9&count=2');
    expect(beyond.body).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
    // Out-of-range values are clamped as RFC 7644 says; count=0 answers the total alone.
    expect((await okta.get('/Users?startIndex=0&count=-3')).body).toMatchObject({
      startIndex: 1,
      itemsPerPage: 0,
      totalResults: 5,
    });
    expectScimError(await okta.get('/Users?count=ten'), 400, 'invalidValue');

    await okta.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Sales', members: [] });
    clock.advance(1000);
    await okta.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Support' });
    const groups = await okta.get('/Groups?startIndex=1&count=100');
    expect(groups.body.totalResults).toBe(2);
    expect(groups.body.Resources.map((g: any) => g.displayName)).toEqual(['Sales', 'Support']);
    const byName = await okta.get(`/Groups${filterQuery('displayName eq "support"')}`);
    expect(byName.body.Resources.map((g: any) => g.displayName)).toEqual(['Support']);
    // A second group of the same name is a uniqueness conflict.
    expectScimError(await okta.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'SALES' }), 409, 'uniqueness');
  });
});

describe('SCIM cannot lock the organisation out', () => {
  it('refuses to deactivate or delete the holder of the last admin key; their key keeps working', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);
    const okta = scimClient(t.baseUrl, (await createScimToken(owner)).token, 'application/json');
    const invite = await owner.post('/v1/invites', { email: 'ada@example.test', role: 'admin' });
    const accepted = await apiClient(t.baseUrl).post('/v1/invites/accept', { token: invite.body.token });
    const ada = apiClient(t.baseUrl, accepted.body.api_key);
    // Ada revokes the owner's key: hers is now the organisation's last admin key.
    const keys = (await ada.get('/v1/api-keys?page_size=100')).body.data as Array<{ id: string }>;
    const ownerKey = keys.find((k) => k.id !== accepted.body.api_key_id)!;
    expect((await ada.delete(`/v1/api-keys/${ownerKey.id}`)).status).toBe(200);

    const userId: string = accepted.body.user.id;
    const refused = await okta.call('PATCH', `/Users/${userId}`, patchOp({ op: 'replace', value: { active: false } }));
    expectScimError(refused, 409);
    expect(refused.body.detail).toMatch(/last active admin key of an owner or admin; they cannot be deactivated/);
    expectScimError(await okta.delete(`/Users/${userId}`), 409);
    expect((await okta.get(`/Users/${userId}`)).body.active).toBe(true);
    expect((await ada.get('/v1/workspaces')).status).toBe(200);
  });
});

describe.skipIf(!hasServices)('SCIM with several instances on PostgreSQL', () => {
  it('a user Okta deactivates on one instance has their key refused on another at once', async () => {
    const adminKey = `scim-scale-${'k'.repeat(32)}`;
    const env = await sharedInstancesEnv({ SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey });
    const a = await startTestServer({ env });
    const b = await startTestServer({ env });
    const admin = apiClient(a.baseUrl, adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');
    const okta = scimClient(a.baseUrl, (await createScimToken(admin)).token, 'application/json');
    const user = await okta.post('/Users', oktaUser('mia@example.test', 'Mia', 'Wong', '00u9'));
    await admin.post('/v1/workspaces/team-a/members', { users: [{ id: user.body.id, role: 'member' }] });
    const key = await createWorkspaceKey(admin, {
      workspace_id: team.id,
      user_id: user.body.id,
      scopes: ['workspaces.read'],
    });
    const onB = apiClient(b.baseUrl, key.key);
    // B verifies the key and keeps it for key_cache_ttl_ms (60 s by default).
    expect((await onB.get(`/v1/workspaces/${team.id}`)).status).toBe(200);

    const heard = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('B heard no key change within 5 s')), 5_000);
      const off = b.server.changes.on((change) => {
        if (change.topic !== 'keys') return;
        clearTimeout(timer);
        off();
        resolve();
      });
    });
    const deactivated = await okta.call(
      'PATCH',
      `/Users/${user.body.id}`,
      patchOp({ op: 'replace', value: { active: false } }),
    );
    expect(deactivated.body.active).toBe(false);
    await heard;
    expect((await onB.get(`/v1/workspaces/${team.id}`)).status).toBe(401);
  });
});
