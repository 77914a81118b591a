import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import {
  createScimToken,
  ENTERPRISE,
  expectScimError,
  filterQuery,
  GROUP_SCHEMA,
  patchOp,
  scimClient,
  USER_SCHEMA,
} from '../helpers/scim.js';
import { startTestServer } from '../helpers/start-test-server.js';

/** A user as Microsoft Entra ID's provisioning service creates it (core plus enterprise extension). */
const entraUser = (userName: string, mail: string, externalId: string) => ({
  schemas: [USER_SCHEMA, ENTERPRISE],
  externalId,
  userName,
  active: true,
  emails: [{ primary: true, type: 'work', value: mail }],
  meta: { resourceType: 'User' },
  name: { formatted: 'Alex Wilber', familyName: 'Wilber', givenName: 'Alex' },
  roles: [],
  [ENTERPRISE]: { department: 'Sales', employeeNumber: '42', manager: { value: 'M-1' } },
});

describe('SCIM as Microsoft Entra ID sends it', () => {
  it('provisions a user and applies Entra PATCH shapes: capitalised ops, filtered paths, "False" strings', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');
    const entra = scimClient(t.baseUrl, (await createScimToken(admin, 'Entra ID')).token);

    // The connection test: a random userName must find nobody, in a well-formed ListResponse.
    const probe = await entra.get(`/Users${filterQuery(`userName eq "${randomUUID()}"`)}`);
    expect(probe.status).toBe(200);
    expect(probe.body).toMatchObject({ totalResults: 0, Resources: [] });

    const externalId = randomUUID();
    const created = await entra.post(
      '/Users',
      entraUser('AlexW@contoso.example', 'alex.wilber@contoso.example', externalId),
    );
    expect(created.status).toBe(201);
    const userId: string = created.body.id;
    expect(created.body).toMatchObject({
      schemas: [USER_SCHEMA, ENTERPRISE],
      userName: 'AlexW@contoso.example',
      externalId,
      name: { formatted: 'Alex Wilber', familyName: 'Wilber', givenName: 'Alex' },
      emails: [{ primary: true, type: 'work', value: 'alex.wilber@contoso.example' }],
      active: true,
      [ENTERPRISE]: { department: 'Sales', employeeNumber: '42', manager: { value: 'M-1' } },
    });
    // The primary e-mail, not the userName, is the svcgw address.
    expect((await admin.get(`/v1/users/${userId}`)).body.email).toBe('alex.wilber@contoso.example');

    // Entra matches on externalId or userName.
    const byExternalId = await entra.get(`/Users${filterQuery(`externalId eq "${externalId}"`)}`);
    expect(byExternalId.body.Resources.map((u: any) => u.id)).toEqual([userId]);
    const byEmail = await entra.get(`/Users${filterQuery('emails[value eq "ALEX.WILBER@contoso.example"]')}`);
    expect(byEmail.body.totalResults).toBe(1);

    const updated = await entra.patch(
      `/Users/${userId}`,
      patchOp(
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'alex@contoso.example' },
        { op: 'Replace', path: 'name.familyName', value: 'Wilber-Smith' },
        { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Marketing' },
        { op: 'Add', path: 'displayName', value: 'Alex W.' },
        { op: 'Replace', path: 'urn:ietf:params:scim:schemas:core:2.0:User:title', value: 'Seller' },
      ),
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({
      emails: [{ primary: true, type: 'work', value: 'alex@contoso.example' }],
      name: { familyName: 'Wilber-Smith', givenName: 'Alex' },
      displayName: 'Alex W.',
      title: 'Seller',
      [ENTERPRISE]: { department: 'Marketing', employeeNumber: '42' },
    });
    expect((await admin.get(`/v1/users/${userId}`)).body).toMatchObject({
      email: 'alex@contoso.example',
      last_name: 'Wilber-Smith',
    });

    // No path, keys that are paths themselves, booleans as strings.
    const noPath = await entra.patch(
      `/Users/${userId}`,
      patchOp({ op: 'Replace', value: { 'name.givenName': 'Alexander', [`${ENTERPRISE}:employeeNumber`]: '43' } }),
    );
    expect(noPath.body).toMatchObject({ name: { givenName: 'Alexander' }, [ENTERPRISE]: { employeeNumber: '43' } });
    // An address Entra adds where there was no work one is created.
    const other = await entra.post('/Users', {
      schemas: [USER_SCHEMA],
      userName: 'nomail',
      emails: [{ type: 'home', value: 'n@home.example' }],
    });
    expect(other.status).toBe(201);
    const added = await entra.patch(
      `/Users/${other.body.id}`,
      patchOp({ op: 'Add', path: 'emails[type eq "work"].value', value: 'n@contoso.example' }),
    );
    expect(added.body.emails).toEqual([
      { type: 'home', value: 'n@home.example' },
      { type: 'work', value: 'n@contoso.example' },
    ]);

    // Soft delete: "False" as a string. The user's key (a membership made by hand) stops at once.
    await admin.post('/v1/workspaces/team-a/members', { users: [{ id: userId, role: 'member' }] });
    const key = await createWorkspaceKey(admin, {
      workspace_id: team.id,
      user_id: userId,
      scopes: ['workspaces.read'],
    });
    const theirs = apiClient(t.baseUrl, key.key);
    expect((await theirs.get(`/v1/workspaces/${team.id}`)).status).toBe(200);
    const disabled = await entra.patch(`/Users/${userId}`, patchOp({ op: 'Replace', path: 'active', value: 'False' }));
    expect(disabled.status).toBe(200);
    expect(disabled.body.active).toBe(false);
    expect((await theirs.get(`/v1/workspaces/${team.id}`)).body.error.code).toBe('INVALID_API_KEY');
    // SCIM never touches memberships made by hand: it is still there, for when the user comes back.
    expect((await admin.get(`/v1/workspaces/team-a/members/${userId}`)).status).toBe(200);
    const enabled = await entra.patch(`/Users/${userId}`, patchOp({ op: 'Replace', path: 'active', value: 'True' }));
    expect(enabled.body.active).toBe(true);
    expect((await theirs.get(`/v1/workspaces/${team.id}`)).status).toBe(200);

    // Hard delete after the retention period: the user, their memberships and keys go.
    expect((await entra.delete(`/Users/${userId}`)).status).toBe(204);
    expectScimError(await entra.get(`/Users/${userId}`), 404);
    expect((await admin.get(`/v1/users/${userId}`)).status).toBe(404);
    expect((await theirs.get(`/v1/workspaces/${team.id}`)).status).toBe(401);
    expectScimError(await entra.delete(`/Users/${userId}`), 404);
  });

  it('manages groups as Entra does: create without members, Add and Remove with value lists, Replace displayName', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team A', 'team-a');
    const entra = scimClient(t.baseUrl, (await createScimToken(admin)).token);
    const alice = await entra.post('/Users', entraUser('alice@contoso.example', 'alice@contoso.example', randomUUID()));
    const bob = await entra.post('/Users', entraUser('bob@contoso.example', 'bob@contoso.example', randomUUID()));

    const groupExternalId = randomUUID();
    const group = await entra.post('/Groups', {
      schemas: [GROUP_SCHEMA],
      externalId: groupExternalId,
      displayName: 'Marketing',
      meta: { resourceType: 'Group' },
    });
    expect(group.status).toBe(201);
    const groupId: string = group.body.id;
    expect(group.body).toMatchObject({ externalId: groupExternalId, displayName: 'Marketing', members: [] });
    await admin.post('/v1/scim/workspaces', { workspace_id: team.id, role: 'member', scim_group_id: groupId });

    // Entra reads groups without their members.
    const lookup = await entra.get(`/Groups${filterQuery('displayName eq "Marketing"', 'excludedAttributes=members')}`);
    expect(lookup.body.totalResults).toBe(1);
    expect(lookup.body.Resources[0].members).toBeUndefined();
    expect(lookup.body.Resources[0]).toMatchObject({ id: groupId, displayName: 'Marketing' });
    const one = await entra.get(`/Groups/${groupId}?excludedAttributes=members`);
    expect(one.body.members).toBeUndefined();
    expect((await entra.get(`/Groups${filterQuery(`externalId eq "${groupExternalId}"`)}`)).body.totalResults).toBe(1);

    const addMembers = await entra.patch(
      `/Groups/${groupId}`,
      patchOp({
        name: 'addMember',
        op: 'Add',
        path: 'members',
        value: [
          { displayName: 'Alice', value: alice.body.id },
          { displayName: 'Bob', value: bob.body.id },
        ],
      }),
    );
    expect(addMembers.status).toBe(200);
    expect(addMembers.body.members.map((m: any) => m.value).sort()).toEqual([alice.body.id, bob.body.id].sort());
    const members = await admin.get(`/v1/workspaces/${team.id}/members`);
    expect(members.body.total).toBe(2);
    // Entra checks membership with a filter on members.
    const isMember = await entra.get(
      `/Groups${filterQuery(`id eq "${groupId}" and members[value eq "${bob.body.id}"]`, 'excludedAttributes=members')}`,
    );
    expect(isMember.body.totalResults).toBe(1);

    const removeMember = await entra.patch(
      `/Groups/${groupId}`,
      patchOp({ name: 'removeMember', op: 'Remove', path: 'members', value: [{ value: bob.body.id }] }),
    );
    expect(removeMember.body.members.map((m: any) => m.value)).toEqual([alice.body.id]);
    expect((await admin.get(`/v1/workspaces/${team.id}/members/${bob.body.id}`)).status).toBe(404);
    expect((await entra.get(`/Groups${filterQuery(`members[value eq "${bob.body.id}"]`)}`)).body.totalResults).toBe(0);

    const renamed = await entra.patch(
      `/Groups/${groupId}`,
      patchOp({ op: 'Replace', path: 'displayName', value: 'Marketing EMEA' }),
    );
    expect(renamed.body).toMatchObject({ displayName: 'Marketing EMEA', members: [{ value: alice.body.id }] });

    // A member that is not a user of the organisation is refused, and nothing changes.
    const unknown = await entra.patch(
      `/Groups/${groupId}`,
      patchOp({ op: 'Add', path: 'members', value: [{ value: randomUUID() }] }),
    );
    expectScimError(unknown, 400, 'invalidValue');
    // Removing every member (remove with no value).
    const emptied = await entra.patch(`/Groups/${groupId}`, patchOp({ op: 'Remove', path: 'members' }));
    expect(emptied.body.members).toEqual([]);
    expect((await admin.get(`/v1/workspaces/${team.id}/members`)).body.total).toBe(0);
  });

  it('answers bad input in the SCIM error schema, never with a 500', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { token } = await createScimToken(admin);
    const entra = scimClient(t.baseUrl, token);
    const user = await entra.post('/Users', entraUser('carol@contoso.example', 'carol@contoso.example', 'c-1'));
    const id: string = user.body.id;

    expectScimError(await entra.get(`/Users${filterQuery('userName co "carol"')}`), 400, 'invalidFilter');
    expectScimError(await entra.get(`/Users${filterQuery('userName eq')}`), 400, 'invalidFilter');
    expectScimError(await entra.get(`/Users${filterQuery('title eq "x"')}`), 400, 'invalidFilter');
    expectScimError(await entra.get('/Users?filter=a&filter=b'), 400, 'invalidValue');
    expectScimError(await entra.post('/Users', '{"userName": '), 400, 'invalidSyntax');
    expectScimError(await entra.post('/Users', '['.repeat(5000)), 400, 'invalidSyntax');
    expectScimError(await entra.post('/Users', { schemas: [USER_SCHEMA] }), 400, 'invalidValue');
    expectScimError(await entra.post('/Users', { userName: 'nobody-without-mail' }), 400, 'invalidValue');
    expectScimError(await entra.post('/Users', { userName: 'x@y.example', active: 'maybe' }), 400, 'invalidValue');
    expectScimError(await entra.post('/Users', { userName: 'x@y.example', name: 'Carol' }), 400, 'invalidValue');
    expectScimError(await entra.post('/Users', [1, 2]), 400, 'invalidSyntax');
    expectScimError(await entra.post('/Users', { userName: 'x'.repeat(300) + '@y.example' }), 400, 'invalidValue');
    expectScimError(
      await entra.post('/Users', entraUser('CAROL@contoso.example', 'other@contoso.example', 'c-2')),
      409,
      'uniqueness',
    );
    expectScimError(
      await entra.post('/Users', entraUser('dave@contoso.example', 'carol@contoso.example', 'c-3')),
      409,
      'uniqueness',
    );

    expectScimError(await entra.patch(`/Users/${id}`, { Operations: [] }), 400, 'invalidSyntax');
    expectScimError(
      await entra.patch(`/Users/${id}`, patchOp({ op: 'Move', path: 'title', value: 1 })),
      400,
      'invalidSyntax',
    );
    expectScimError(await entra.patch(`/Users/${id}`, patchOp({ op: 'Replace', path: 'title' })), 400, 'invalidValue');
    expectScimError(await entra.patch(`/Users/${id}`, patchOp({ op: 'Remove' })), 400, 'noTarget');
    expectScimError(
      await entra.patch(`/Users/${id}`, patchOp({ op: 'Replace', path: 'emails[type eq', value: 'x' })),
      400,
      'invalidPath',
    );
    expectScimError(
      await entra.patch(`/Users/${id}`, patchOp({ op: 'Replace', path: '%%%', value: 'x' })),
      400,
      'invalidPath',
    );
    // A filter that matches nothing and is not made of equalities cannot say what to create.
    expectScimError(
      await entra.patch(
        `/Users/${id}`,
        patchOp({ op: 'Replace', path: 'emails[type co "zz"].value', value: 'x@y.example' }),
      ),
      400,
      'noTarget',
    );
    expectScimError(
      await entra.patch(`/Users/${id}`, patchOp({ op: 'Replace', path: 'active', value: 'nope' })),
      400,
      'invalidValue',
    );
    expectScimError(
      await entra.patch(`/Users/${id}`, patchOp({ op: 'Remove', path: 'userName' })),
      400,
      'invalidValue',
    );
    // groups is read-only on users unless SCIM_MEMBERSHIP_USER_MODE=ON.
    expectScimError(
      await entra.patch(`/Users/${id}`, patchOp({ op: 'Add', path: 'groups', value: [{ value: randomUUID() }] })),
      400,
      'mutability',
    );
    // Odd shapes anywhere: always a 4xx in the SCIM error schema, never a 5xx.
    const odd: unknown[] = [null, 5, 'x', [], [{}], { value: 1 }, { a: { b: [null] } }, 'x'.repeat(10_000), true];
    const group = await entra.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Odd' });
    for (const value of odd) {
      const answers = [
        await entra.post('/Users', { userName: value, emails: value }),
        await entra.post('/Users', { userName: 'odd@example.test', emails: value, name: value, externalId: value }),
        await entra.post('/Groups', { displayName: value, members: value }),
        await entra.post('/Groups', { displayName: 'Odd 2', members: [value] }),
        await entra.patch(`/Users/${id}`, { Operations: value }),
        await entra.patch(`/Users/${id}`, { Operations: [value] }),
        await entra.patch(`/Users/${id}`, patchOp({ op: 'add', path: 'emails', value })),
        await entra.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'name', value })),
        await entra.patch(`/Users/${id}`, patchOp({ op: 'replace', path: `${ENTERPRISE}`, value })),
        await entra.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'name[givenName eq "x"].y', value })),
        await entra.patch(`/Users/${id}`, patchOp({ op: 'replace', value })),
        await entra.patch(`/Groups/${group.body.id}`, patchOp({ op: 'add', path: 'members', value })),
        await entra.patch(`/Groups/${group.body.id}`, patchOp({ op: 'replace', path: 'displayName', value })),
        await entra.patch(`/Groups/${group.body.id}`, patchOp({ op: 'remove', path: 'members[value eq 1]', value })),
        await entra.patch(`/Groups/${group.body.id}`, patchOp({ op: 'add', path: 'urn:x:y:z', value })),
      ];
      for (const res of answers) {
        expect(res.status, JSON.stringify(value)).toBeLessThan(500);
        if (res.status >= 400) expectScimError(res, res.status);
      }
    }
    for (const path of ['members[', 'a..b', 'members[value eq "x"', '[x]', 'urn:', 'a.b.c', ' ', '((((((']) {
      const res = await entra.patch(`/Groups/${group.body.id}`, patchOp({ op: 'replace', path, value: 'x' }));
      expect(res.status, path).toBeLessThan(500);
      expect(res.status, path).toBeGreaterThanOrEqual(400);
    }
    expectScimError(await entra.get(`/Users${filterQuery('('.repeat(3000))}`), 400, 'invalidFilter');
    expect((await entra.get('/Users?startIndex=999999999999999&count=5')).body.Resources).toEqual([]);

    expectScimError(await entra.get('/Users/not-an-id'), 404);
    expectScimError(
      await entra.patch(`/Users/${randomUUID()}`, patchOp({ op: 'Replace', path: 'title', value: 'x' })),
      404,
    );
    expectScimError(await entra.get('/Schemas/urn:nothing'), 404);
    expectScimError(await entra.get('/ResourceTypes/Printer'), 404);

    // ETags: If-None-Match answers 304; If-Match with a stale version answers 412 and changes nothing.
    const read = await entra.get(`/Users/${id}`);
    const version = read.headers.get('etag')!;
    expect(version).toMatch(/^W\/".+"$/);
    expect((await entra.get(`/Users/${id}`, { 'if-none-match': version })).status).toBe(304);
    const changed = await entra.patch(`/Users/${id}`, patchOp({ op: 'Replace', path: 'title', value: 'Boss' }), {
      'if-match': version,
    });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(version);
    const stale = await entra.patch(`/Users/${id}`, patchOp({ op: 'Replace', path: 'title', value: 'Intern' }), {
      'if-match': version,
    });
    expectScimError(stale, 412);
    expectScimError(await entra.delete(`/Users/${id}`, { 'if-match': version }), 412);
    expect((await entra.get(`/Users/${id}`)).body.title).toBe('Boss');
    expect(
      (await entra.patch(`/Users/${id}`, patchOp({ op: 'Replace', path: 'title', value: 'X' }), { 'if-match': '*' }))
        .status,
    ).toBe(200);

    // The organisation keeps its owner: the provider can neither deactivate nor delete the last one.
    const owner = (await entra.get('/Users')).body.Resources.find(
      (u: any) => u.id !== id && u.userName !== 'odd@example.test',
    );
    expect(owner.active).toBe(true);
    const ownerOff = await entra.patch(
      `/Users/${owner.id}`,
      patchOp({ op: 'Replace', path: 'active', value: 'False' }),
    );
    expectScimError(ownerOff, 400, 'mutability');
    expect(ownerOff.body.detail).toBe('The last active owner of the organisation cannot be deactivated.');
    expectScimError(await entra.delete(`/Users/${owner.id}`), 400, 'mutability');
    expect((await admin.get('/v1/users')).status).toBe(200);

    // Without a valid SCIM token: 401 in the SCIM schema. An API key is no SCIM token.
    expectScimError(await scimClient(t.baseUrl, null).get('/Users'), 401);
    expectScimError(await scimClient(t.baseUrl, t.adminKey).get('/Users'), 401);
    expectScimError(await scimClient(t.baseUrl, 'scim-nope').get('/Users'), 401);
    const withKeyHeader = await apiClient(t.baseUrl, t.adminKey).get('/v1/scim/v2/Users');
    expectScimError(withKeyHeader, 401);
    // And a SCIM token is no API key.
    expect((await apiClient(t.baseUrl).get('/v1/users', { authorization: `Bearer ${token}` })).status).toBe(401);
    expect(t.logLines.join('\n')).not.toContain(token);
  });
});
