import { describe, expect, it } from 'vitest';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const PROMPT_SCOPES = ['prompts.create', 'prompts.read', 'prompts.list', 'prompts.update', 'prompts.delete'];

describe('prompt collections, labels and partials', () => {
  it('collections: per workspace, nested, a default one that cannot be deleted', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team', 'team');
    const other = await createWorkspace(admin, 'Other', 'other');

    const noWorkspace = await admin.get('/v1/collections');
    expect(noWorkspace.status).toBe(400);
    expect(noWorkspace.body.error.param).toBe('workspace_id');

    const first = await admin.get('/v1/collections?workspace_id=team');
    expect(first.body).toMatchObject({ object: 'list', total: 1 });
    const defaultCollection = first.body.data[0];
    expect(defaultCollection).toMatchObject({ is_default: true, workspace_id: team.id, slug: 'default-team' });

    const parent = await admin.post('/v1/collections', { name: 'Support', slug: 'support', workspace_id: 'team' });
    expect(parent.status).toBe(200);
    const child = await admin.post('/v1/collections', { name: 'Billing', parent_collection_id: 'support' });
    expect(child.status).toBe(200);
    const reserved = await admin.post('/v1/collections', { name: 'x', slug: 'default-x', workspace_id: 'team' });
    expect(reserved.body.error.param).toBe('slug');
    const crossParent = await admin.post('/v1/collections', {
      name: 'Odd',
      workspace_id: 'other',
      parent_collection_id: 'support',
    });
    expect(crossParent.status).toBe(400);
    expect(crossParent.body.error.param).toBe('parent_collection_id');

    const prompt = await admin.post('/v1/prompts', { name: 'P', string: 'Hi', collection_id: child.body.id });
    expect(prompt.status).toBe(200);
    expect((await admin.get(`/v1/prompts/${prompt.body.id}`)).body.workspace_id).toBe(team.id);
    expect((await admin.get(`/v1/prompts?collection_id=${child.body.id}`)).body.total).toBe(1);
    // A prompt cannot move to another workspace's collection.
    const otherDefault = (await admin.get('/v1/collections?workspace_id=other')).body.data[0].id;
    const move = await admin.put(`/v1/prompts/${prompt.body.id}`, { collection_id: otherDefault });
    expect(move.status).toBe(400);
    expect(move.body.error.param).toBe('collection_id');
    expect(other.id).not.toBe(team.id);

    const got = await admin.get('/v1/collections/support');
    expect(got.body).toMatchObject({ name: 'Support', parent_collection_id: null });
    expect(got.body.child_collections).toEqual([
      expect.objectContaining({
        id: child.body.id,
        name: 'Billing',
        collection_details: expect.objectContaining({ prompts_count: 1 }),
      }),
    ]);
    expect((await admin.put('/v1/collections/support', { name: 'Help desk' })).status).toBe(200);
    expect((await admin.get('/v1/collections/support')).body.name).toBe('Help desk');

    expect((await admin.delete(`/v1/collections/${defaultCollection.id}`)).status).toBe(409);
    expect((await admin.delete('/v1/collections/support')).status).toBe(409); // holds Billing
    expect((await admin.delete(`/v1/collections/${child.body.id}`)).status).toBe(409); // holds a prompt
    await admin.delete(`/v1/prompts/${prompt.body.id}`);
    expect((await admin.delete(`/v1/collections/${child.body.id}`)).status).toBe(200);
    expect((await admin.delete('/v1/collections/support')).status).toBe(200);
    expect((await admin.get('/v1/collections?workspace_id=team')).body.total).toBe(1);

    // A workspace key sees its own workspace's collections only.
    const key = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: team.id, scopes: PROMPT_SCOPES })).key,
    );
    expect((await key.get('/v1/collections')).body.data[0].id).toBe(defaultCollection.id);
    expect((await key.get('/v1/collections?workspace_id=other')).status).toBe(403);
    expect((await key.get(`/v1/collections/${otherDefault}`)).status).toBe(403);
  });

  it('labels: universal ones, organisation and workspace labels, the name rule, deletion takes them off versions', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team', 'team');
    const universal = (await admin.get('/v1/labels')).body.data;
    expect(universal.map((l: any) => [l.name, l.is_universal])).toEqual([
      ['development', true],
      ['production', true],
      ['staging', true],
    ]);
    for (const name of ['latest', 'default', '42', 'a b', 'x@y', '']) {
      const res = await admin.post('/v1/labels', { name });
      expect(res.status, name).toBe(400);
      expect(res.body.error.param, name).toBe('name');
    }
    const org = await admin.post('/v1/labels', { name: 'canary', description: 'early', color_code: '#ff8800' });
    expect(org.status).toBe(200);
    expect((await admin.post('/v1/labels', { name: 'canary', workspace_id: 'team' })).status).toBe(409);
    const ws = await admin.post('/v1/labels', { name: 'team-only', workspace_id: 'team' });
    expect(ws.status).toBe(200);
    expect((await admin.get(`/v1/labels/${ws.body.id}`)).body).toMatchObject({
      workspace_id: team.id,
      is_universal: false,
    });

    const key = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: team.id, scopes: PROMPT_SCOPES })).key,
    );
    const seen = (await key.get('/v1/labels')).body.data.map((l: any) => l.name);
    expect(seen).toEqual(['development', 'production', 'staging', 'canary', 'team-only']);
    const defaultOnly = (await admin.get('/v1/labels?workspace_id=default')).body.data.map((l: any) => l.name);
    expect(defaultOnly).not.toContain('team-only');
    expect((await key.put(`/v1/labels/${org.body.id}`, { description: 'mine' })).status).toBe(403);
    expect((await admin.put(`/v1/labels/${universal[1].id}`, { description: 'x' })).status).toBe(409);
    expect((await admin.delete(`/v1/labels/${universal[0].id}`)).status).toBe(409);
    expect((await admin.put(`/v1/labels/${org.body.id}`, { name: 'early' })).status).toBe(200);

    // A label on a version; deleting the label takes it off.
    const prompt = await admin.post('/v1/prompts', { name: 'P', string: 'Hi', workspace_id: 'team' });
    expect((await key.put(`/v1/prompts/${prompt.body.id}/versions/1`, { label_id: 'team-only' })).status).toBe(200);
    expect((await key.get(`/v1/prompts/${prompt.body.id}@team-only`)).status).toBe(200);
    // A workspace label of another workspace is not seen.
    const elsewhere = await admin.post('/v1/prompts', { name: 'Q', string: 'Hi' });
    const foreign = await admin.put(`/v1/prompts/${elsewhere.body.id}/versions/1`, { label_id: ws.body.id });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.param).toBe('label_id');
    expect((await admin.delete(`/v1/labels/${ws.body.id}`)).status).toBe(200);
    expect((await admin.get(`/v1/prompts/${prompt.body.id}`)).body.prompt_version_label_id).toBeNull();
    expect((await key.get(`/v1/prompts/${prompt.body.id}@team-only`)).status).toBe(404);
  });

  it('partials: versions, default, rename, archive', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/prompts/partials', {
      name: 'Footer',
      slug: 'footer',
      string: 'Thanks!',
      version_description: 'v1',
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ slug: 'footer', object: 'partial' });
    const update = await admin.put('/v1/prompts/partials/footer', {
      string: 'Thank you.',
      description: 'v2',
      name: 'Sign-off',
    });
    expect(update.status).toBe(200);
    expect((await admin.get('/v1/prompts/partials/footer')).body).toMatchObject({
      name: 'Sign-off',
      string: 'Thanks!',
      version: 1,
      version_description: 'v1',
    });
    const versions = await admin.get('/v1/prompts/partials/footer/versions');
    expect(versions.body.data.map((v: any) => [v.version, v.description, v.is_default])).toEqual([
      [2, 'v2', false],
      [1, 'v1', true],
    ]);
    expect((await admin.put('/v1/prompts/partials/footer/makeDefault', { version: 2 })).status).toBe(200);
    expect((await admin.get(`/v1/prompts/partials/${created.body.id}`)).body).toMatchObject({
      string: 'Thank you.',
      prompt_partial_version_id: update.body.prompt_partial_version_id,
    });
    expect((await admin.get('/v1/prompts/partials')).body.total).toBe(1);
    expect((await admin.delete('/v1/prompts/partials/footer')).status).toBe(200);
    expect((await admin.get('/v1/prompts/partials')).body.total).toBe(0);
    // A prompt that includes an archived partial no longer saves.
    const res = await admin.post('/v1/prompts', { name: 'P', string: '{{>footer}}' });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('partials.footer');
  });
});

describe('prompts: access by role under the security settings', () => {
  async function people(t: TestServer, admin: ApiClient) {
    const orgId = t.server.bootstrap.organisationId;
    const team = await createWorkspace(admin, 'Team', 'team');
    const keyFor = async (role: 'member' | 'manager' | 'admin') => {
      const userId = await addUser(t.server.db, orgId, 'member', [{ workspaceId: team.id, role }]);
      const scopes = [...PROMPT_SCOPES, 'completions.write'];
      return apiClient(
        t.baseUrl,
        (await createWorkspaceKey(admin, { workspace_id: team.id, scopes, user_id: userId })).key,
      );
    };
    return { member: await keyFor('member'), manager: await keyFor('manager'), wsAdmin: await keyFor('admin') };
  }

  const canRead = async (client: ApiClient, id: string) => (await client.get(`/v1/prompts/${id}`)).status;
  const canWrite = async (client: ApiClient) =>
    (await client.post('/v1/prompts', { name: 'by role', string: 'Hi' })).status;

  it('defaults: members view, managers view and write; the organisation and the workspace change that', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { member, manager, wsAdmin } = await people(t, admin);
    const prompt = await admin.post('/v1/prompts', {
      name: 'P',
      string: 'Hi {{name}}',
      workspace_id: 'team',
      model: 'm',
    });
    const id = prompt.body.id;

    expect([await canRead(member, id), await canWrite(member)]).toEqual([200, 403]);
    const refused = await member.post('/v1/prompts', { name: 'x', string: 'x' });
    expect(refused.body.error.code).toBe('ROLE_NOT_ALLOWED');
    expect(refused.body.error.message).toContain('membersWritePrompts');
    expect((await member.delete(`/v1/prompts/${id}`)).status).toBe(403);
    expect([await canRead(manager, id), await canWrite(manager)]).toEqual([200, 200]);

    // The organisation lets members write.
    expect((await admin.put('/v1/settings/security', { membersWritePrompts: true })).status).toBe(200);
    expect(await canWrite(member)).toBe(200);

    // The workspace hides prompts from managers: no reading, no writing (writing needs seeing), no render.
    const override = await admin.put('/v1/workspaces/team/settings/security', {
      prompts: { managersViewPrompts: false },
    });
    expect(override.status).toBe(200);
    expect([await canRead(manager, id), await canWrite(manager)]).toEqual([403, 403]);
    expect((await manager.get('/v1/prompts')).status).toBe(403);
    expect((await manager.get('/v1/labels')).status).toBe(403);
    const render = await manager.post(`/v1/prompts/${id}/render`, { variables: { name: 'x' } });
    expect(render.status).toBe(403);
    expect(render.body.error.code).toBe('ROLE_NOT_ALLOWED');
    expect((await member.post(`/v1/prompts/${id}/render`, { variables: { name: 'x' } })).status).toBe(200);

    // Members lose writing again when the organisation says so, unless the workspace overrides.
    await admin.put('/v1/settings/security', { membersWritePrompts: false, membersViewPrompts: false });
    expect([await canRead(member, id), await canWrite(member)]).toEqual([403, 403]);
    await admin.put('/v1/workspaces/team/settings/security', {
      prompts: { membersViewPrompts: true, membersWritePrompts: true },
    });
    expect([await canRead(member, id), await canWrite(member)]).toEqual([200, 200]);

    // Workspace admins and organisation owners always have full access.
    await admin.put('/v1/workspaces/team/settings/security', {
      prompts: { membersViewPrompts: false, managersViewPrompts: false },
    });
    expect([await canRead(wsAdmin, id), await canWrite(wsAdmin)]).toEqual([200, 200]);
    expect([await canRead(admin, id), await canWrite(admin)]).toEqual([200, 200]);
  });
});
