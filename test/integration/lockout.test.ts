import { describe, expect, it } from 'vitest';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const bootstrapKeyId = async (t: Awaited<ReturnType<typeof startTestServer>>) =>
  (await t.server.db.selectFrom('api_keys').select('id').where('creation_mode', '=', 'auto').executeTakeFirstOrThrow())
    .id;

describe('no way to lock yourself out through the API', () => {
  it('refuses to revoke the last admin key with 409 LAST_ADMIN_KEY and says what to do; the key keeps working', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const id = await bootstrapKeyId(t);

    const refused = await admin.delete(`/v1/api-keys/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'LAST_ADMIN_KEY', type: 'invalid_request_error' });
    expect(refused.body.error.message).toMatch(/last active admin key/);
    expect(refused.body.error.message).toMatch(/Create another admin key/);
    expect((await admin.get('/v1/workspaces')).status).toBe(200);

    // Dropping the scope that makes admin keys would leave nobody able to make one either.
    const narrowed = await admin.put(`/v1/api-keys/${id}`, { scopes: ['workspaces.list'] });
    expect(narrowed.status).toBe(409);
    expect(narrowed.body.error.code).toBe('LAST_ADMIN_KEY');
    expect((await admin.get(`/v1/api-keys/${id}`)).body.scopes).toContain('organisation_service_api_keys.create');
  });

  it('revokes the old admin key once another one can administer, and then refuses the new last one', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const oldId = await bootstrapKeyId(t);
    const scopes = (await admin.get(`/v1/api-keys/${oldId}`)).body.scopes as string[];

    // A key without the create scope does not count: it could never make another admin key.
    const readOnly = await admin.post('/v1/api-keys/organisation/service', { name: 'ro', scopes: ['workspaces.list'] });
    expect(readOnly.status).toBe(200);
    expect((await admin.delete(`/v1/api-keys/${oldId}`)).status).toBe(409);

    const second = await admin.post('/v1/api-keys/organisation/service', { name: 'second', scopes });
    expect(second.status).toBe(200);
    expect((await admin.delete(`/v1/api-keys/${oldId}`)).status).toBe(200);
    expect((await admin.get('/v1/workspaces')).status).toBe(401);

    const next = apiClient(t.baseUrl, second.body.key);
    expect((await next.get('/v1/workspaces')).status).toBe(200);
    expect((await next.delete(`/v1/api-keys/${readOnly.body.id}`)).status).toBe(200);
    const last = await next.delete(`/v1/api-keys/${second.body.id}`);
    expect(last.status).toBe(409);
    expect(last.body.error.code).toBe('LAST_ADMIN_KEY');
  });

  it('leaves workspace keys alone: they are revoked as before', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const workspace = await createWorkspace(admin, 'Team');
    const key = await createWorkspaceKey(admin, { workspace_id: workspace.id, scopes: ['workspaces.read'] });
    expect((await admin.delete(`/v1/api-keys/${key.id}`)).status).toBe(200);
    expect((await admin.get(`/v1/api-keys/${key.id}`)).status).toBe(404);
  });

  it('a rotation is no lockout: the rotated last admin key works with its old secret during the transition and the new one', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const id = await bootstrapKeyId(t);
    const rotated = await admin.post(`/v1/api-keys/${id}/rotate`, {});
    expect(rotated.status).toBe(200);
    expect((await admin.get('/v1/workspaces')).status).toBe(200);
    expect((await apiClient(t.baseUrl, rotated.body.key).get('/v1/workspaces')).status).toBe(200);
    expect((await admin.delete(`/v1/api-keys/${id}`)).status).toBe(409);
  });

  it('refuses to remove or demote the admin who holds the last admin key, and allows it once another one exists', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);
    const organisationId = t.server.bootstrap.organisationId;
    const adminUser = await addUser(t.server.db, organisationId, 'admin');
    const ownerId = await bootstrapKeyId(t);
    const scopes = (await owner.get(`/v1/api-keys/${ownerId}`)).body.scopes as string[];
    // Keys are made for the caller's user: this one is handed to the admin in the database.
    const adminKey = await owner.post('/v1/api-keys/organisation/service', { name: 'admin', scopes });
    expect(adminKey.status).toBe(200);
    await t.server.db.updateTable('api_keys').set({ user_id: adminUser }).where('id', '=', adminKey.body.id).execute();
    // The owner's key goes; the admin's is now the only one.
    expect((await owner.delete(`/v1/api-keys/${ownerId}`)).status).toBe(200);
    const admin = apiClient(t.baseUrl, adminKey.body.key);

    const demote = await admin.put(`/v1/users/${adminUser}`, { role: 'member' });
    expect(demote.status).toBe(409);
    expect(demote.body.error.message).toMatch(/last active admin key/);
    const remove = await admin.delete(`/v1/users/${adminUser}`);
    expect(remove.status).toBe(409);
    expect((await admin.get('/v1/workspaces')).status).toBe(200);

    // A key with no user behind it does not count.
    const orphan = await admin.post('/v1/api-keys/organisation/service', { name: 'orphan', scopes });
    await t.server.db.updateTable('api_keys').set({ user_id: null }).where('id', '=', orphan.body.id).execute();
    expect((await admin.put(`/v1/users/${adminUser}`, { role: 'member' })).status).toBe(409);

    // A key of the owner does: now the admin may be demoted.
    const spare = await admin.post('/v1/api-keys/organisation/service', { name: 'spare', scopes });
    const ownerUser = (
      await t.server.db.selectFrom('users').select('id').where('role', '=', 'owner').executeTakeFirstOrThrow()
    ).id;
    await t.server.db.updateTable('api_keys').set({ user_id: ownerUser }).where('id', '=', spare.body.id).execute();
    expect((await admin.put(`/v1/users/${adminUser}`, { role: 'member' })).status).toBe(200);
    expect((await apiClient(t.baseUrl, spare.body.key).get('/v1/users')).status).toBe(200);
  });
});
