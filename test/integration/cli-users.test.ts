import { describe, expect, it } from 'vitest';
import { apiClient } from '../helpers/http.js';
import { cliAgainstServer } from '../helpers/cli.js';

describe('svcgw invites, users and members', () => {
  it('invites a user, who joins; then lists, changes and removes users and members', { timeout: 90_000 }, async () => {
    const { ok, fails, server } = await cliAgainstServer();
    await ok(['workspaces', 'create', '--name', 'Team A', '--slug', 'team-a']);
    await ok(['workspaces', 'create', '--name', 'Team B', '--slug', 'team-b']);

    const invite = await ok([
      'invites',
      'create',
      '--email',
      'ana@example.com',
      '--role',
      'member',
      '--workspace',
      'team-a:manager',
    ]);
    expect(invite).toMatchObject({ id: expect.any(String), invite_link: expect.any(String) });
    expect((await ok(['invites', 'list', '--status', 'pending'])).data.map((i: { email: string }) => i.email)).toEqual([
      'ana@example.com',
    ]);
    expect(await ok(['invites', 'get', invite.id])).toMatchObject({
      email: 'ana@example.com',
      role: 'member',
      status: 'pending',
    });
    const resent = await ok(['invites', 'resend', invite.id]);
    expect(resent.invite_link).toEqual(expect.any(String));
    await fails(['invites', 'create', '--email', 'not-an-address', '--workspace', 'team-a'], 1, /email/);
    await fails(['invites', 'create', '--email', 'x@example.com', '--workspace', 'team-a:boss'], 2, /workspace/);

    // Ana accepts (a public route of the server, not a CLI command).
    const accepted = await apiClient(server.baseUrl).post('/v1/invites/accept', { token: resent.token });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const anaId = accepted.body.user.id as string;

    const users = await ok(['users', 'list']);
    expect(users.data.map((u: { email: string }) => u.email)).toContain('ana@example.com');
    expect(await ok(['users', 'get', anaId])).toMatchObject({ email: 'ana@example.com', role: 'member' });
    await ok(['users', 'update', anaId, '--role', 'admin']);
    expect((await ok(['users', 'list', '--role', 'admin'])).data.map((u: { id: string }) => u.id)).toEqual([anaId]);
    await fails(['users', 'update', anaId, '--role', 'owner'], 2, /Allowed choices are admin, member/);

    expect((await ok(['members', 'list', '--workspace', 'team-a'])).data).toEqual([
      expect.objectContaining({ id: anaId, role: 'manager' }),
    ]);
    await ok(['members', 'add', '--workspace', 'team-b', '--user-id', anaId, '--role', 'member']);
    await ok(['members', 'update', anaId, '--workspace', 'team-b', '--role', 'admin']);
    expect(await ok(['members', 'get', anaId, '--workspace', 'team-b'])).toMatchObject({
      id: anaId,
      role: 'admin',
      email: 'ana@example.com',
    });
    await ok(['members', 'remove', anaId, '--workspace', 'team-b', '--yes']);
    await fails(['members', 'get', anaId, '--workspace', 'team-b'], 1, /HTTP 404/);
    await fails(['members', 'list'], 2, /--workspace/);

    await ok(['users', 'delete', anaId, '--yes']);
    await fails(['users', 'get', anaId], 1, /HTTP 404/);

    const revoked = await ok(['invites', 'create', '--email', 'bo@example.com', '--workspace', 'team-a']);
    await ok(['invites', 'delete', revoked.id, '--yes']);
    expect((await ok(['invites', 'get', revoked.id])).status).toBe('cancelled');
  });
});
