import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const chat = (text: string) =>
  JSON.stringify([
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: text },
  ]);

describe('prompts: the life of a prompt', () => {
  it('creates, reads by id and slug, versions on update (patch fills from the latest), labels, makes default, archives', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);

    // The reference API's create example: every field it names.
    const created = await admin.post('/v1/prompts', {
      name: 'Support reply',
      slug: 'support-reply',
      string: chat('Answer {{question}}'),
      parameters: { temperature: 0.2, max_tokens: 100 },
      virtual_key: '@openai-main',
      model: 'gpt-4o-mini',
      functions: [],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      version_description: 'first',
      template_metadata: { owner: 'support' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ slug: 'support-reply', object: 'prompt' });
    const id = created.body.id as string;

    const bySlug = await admin.get('/v1/prompts/support-reply');
    expect(bySlug.status).toBe(200);
    expect(bySlug.body).toMatchObject({
      id,
      name: 'Support reply',
      prompt_version: 1,
      prompt_version_id: created.body.version_id,
      prompt_version_description: 'first',
      is_default_version: true,
      model: 'gpt-4o-mini',
      virtual_key: '@openai-main',
      parameters: { temperature: 0.2, max_tokens: 100 },
      template_metadata: { owner: 'support' },
      is_raw_template: false,
      status: 'active',
    });
    // It went to the default workspace's default collection, which now exists.
    const collections = await admin.get(`/v1/collections?workspace_id=${bySlug.body.workspace_id}`);
    expect(collections.body.data[0]).toMatchObject({ id: bySlug.body.collection_id, is_default: true });
    expect(collections.body.data[0].collection_details.prompts_count).toBe(1);

    // An update with patch keeps what it does not name, from the latest version.
    const patched = await admin.put(`/v1/prompts/${id}`, { patch: true, parameters: { temperature: 0.9 } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const v2 = await admin.get(`/v1/prompts/${id}/versions/2`);
    expect(v2.body).toMatchObject({
      prompt_version: 2,
      string: chat('Answer {{question}}'),
      model: 'gpt-4o-mini',
      parameters: { temperature: 0.9 },
      template_metadata: { owner: 'support' },
      is_default_version: false,
    });
    // Without patch, a new version is whole: string is required and the rest is unset.
    const noString = await admin.put(`/v1/prompts/${id}`, { model: 'gpt-4o' });
    expect(noString.status).toBe(400);
    expect(noString.body.error.param).toBe('string');
    const whole = await admin.put(`/v1/prompts/${id}`, { string: 'Plain {{question}}', model: 'gpt-4o' });
    expect(whole.status).toBe(200);
    const v3 = await admin.get(`/v1/prompts/${id}@latest`);
    expect(v3.body).toMatchObject({ prompt_version: 3, parameters: null, tools: null, template_metadata: null });
    // A rename alone saves no version.
    const renamed = await admin.put(`/v1/prompts/${id}`, { name: 'Support answer' });
    expect(renamed.body.prompt_version_id).toBe(created.body.version_id);
    const versions = await admin.get(`/v1/prompts/${id}/versions`);
    expect(versions.body.data.map((v: any) => v.prompt_version)).toEqual([3, 2, 1]);

    // The default version stays 1 until makeDefault.
    expect((await admin.get(`/v1/prompts/${id}`)).body.prompt_version).toBe(1);
    expect((await admin.put(`/v1/prompts/${id}/makeDefault`, { version: 2 })).status).toBe(200);
    expect((await admin.get(`/v1/prompts/${id}`)).body).toMatchObject({ prompt_version: 2, name: 'Support answer' });
    expect((await admin.put(`/v1/prompts/${id}/makeDefault`, { version: 9 })).status).toBe(404);

    // Labels: a universal one, moved from version to version; reading by label.
    const labels = await admin.get('/v1/labels');
    const production = labels.body.data.find((l: any) => l.name === 'production');
    expect(production).toMatchObject({ is_universal: true, workspace_id: null });
    const v1Id = created.body.version_id;
    expect((await admin.put(`/v1/prompts/${id}/versions/${v1Id}`, { label_id: production.id })).status).toBe(200);
    expect((await admin.get(`/v1/prompts/${id}@production`)).body.prompt_version).toBe(1);
    expect((await admin.put(`/v1/prompts/${id}/versions/3`, { label_id: 'production' })).status).toBe(200);
    expect((await admin.get(`/v1/prompts/${id}@production`)).body.prompt_version).toBe(3);
    const listed = await admin.get(`/v1/prompts/${id}/versions`);
    expect(listed.body.data.map((v: any) => v.label_id)).toEqual([production.id, null, null]);
    // Versions are immutable but for their label.
    const changeTemplate = await admin.put(`/v1/prompts/${id}/versions/1`, { label_id: null, string: 'x' });
    expect(changeTemplate.status).toBe(400);

    // Archived: gone from the list, its slug free, still readable by id.
    expect((await admin.delete(`/v1/prompts/${id}`)).status).toBe(200);
    expect((await admin.get('/v1/prompts')).body.total).toBe(0);
    expect((await admin.get(`/v1/prompts/${id}`)).body.status).toBe('archived');
    const again = await admin.post('/v1/prompts', { name: 'Again', slug: 'support-reply', string: 'Hi' });
    expect(again.status).toBe(200);
    const audit = await admin.get(`/v1/audit-logs?resource_id=${id}`);
    expect(audit.status).toBe(200);
  });

  it('answers bad input with a 400 naming the field', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const cases: Array<[unknown, string]> = [
      [{ name: 'x', string: 'Hello {{#open}}' }, 'string'],
      [{ name: 'x', string: 'Hello {{>missing-partial}}' }, 'partials.missing-partial'],
      [{ name: 'x', string: 'Hi', slug: 'Not A Slug' }, 'slug'],
      [{ name: 'x', string: 'Hi', collection_id: 'nope' }, 'collection_id'],
      [{ name: 'x', string: 'Hi', config_id: 'nope' }, 'config_id'],
      [{ name: 'x', string: 'Hi', surprise: 1 }, 'body'],
    ];
    for (const [body, param] of cases) {
      const res = await admin.post('/v1/prompts', body);
      expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(body)).toBeLessThan(500);
      expect(res.body.error.param, JSON.stringify(res.body)).toBe(param);
    }
    expect((await admin.get('/v1/prompts/nope')).status).toBe(404);
  });

  it('keeps workspace keys inside their workspace', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const a = await createWorkspace(admin, 'A');
    const b = await createWorkspace(admin, 'B');
    const keyA = apiClient(
      t.baseUrl,
      (
        await createWorkspaceKey(admin, {
          workspace_id: a.id,
          scopes: ['prompts.create', 'prompts.read', 'prompts.list', 'prompts.update'],
        })
      ).key,
    );
    const inB = await admin.post('/v1/prompts', {
      name: 'B prompt',
      slug: 'b-prompt',
      workspace_id: b.id,
      string: 'B',
    });
    expect(inB.status).toBe(200);
    expect((await keyA.get('/v1/prompts/b-prompt')).status).toBe(403);
    expect((await keyA.put('/v1/prompts/b-prompt', { name: 'mine' })).status).toBe(403);
    expect((await keyA.get('/v1/prompts')).body.total).toBe(0);
    const bCollection = (await admin.get('/v1/prompts/b-prompt')).body.collection_id;
    const cross = await keyA.post('/v1/prompts', { name: 'x', string: 'x', collection_id: bCollection });
    expect(cross.status).toBe(403);
    const own = await keyA.post('/v1/prompts', { name: 'A prompt', string: 'A' });
    expect(own.status).toBe(200);
    expect((await keyA.get('/v1/prompts')).body.data.map((p: any) => p.workspace_id)).toEqual([a.id]);
  });

  it("accepts the reference API's request examples", async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const workspace = (await admin.get('/v1/workspaces/default')).body.id;
    const collection = await admin.post('/v1/collections', {
      workspace_id: workspace,
      name: 'Examples',
      parent_collection_id: null,
    });
    expect(collection.status).toBe(200);
    const label = await admin.post('/v1/labels', {
      name: 'beta',
      organisation_id: t.server.bootstrap.organisationId,
      description: 'beta testers',
      color_code: '#123abc',
    });
    expect(label.status, JSON.stringify(label.body)).toBe(200);
    const partial = await admin.post('/v1/prompts/partials', {
      name: 'Intro',
      string: 'Hello',
      workspace_id: workspace,
      version_description: 'first',
    });
    expect(partial.status).toBe(200);
    const created = await admin.post('/v1/prompts', {
      name: 'Example',
      collection_id: collection.body.id,
      string: 'You are a helpful assistant. {{user_input}}',
      parameters: {},
      virtual_key: 'main-258f4d',
      functions: [{}],
      tools: [{}],
      tool_choice: {},
      model: 'gpt-4o',
      version_description: 'v1',
      template_metadata: {},
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const updated = await admin.put(`/v1/prompts/${created.body.id}`, {
      patch: false,
      name: 'Example 2',
      collection_id: collection.body.id,
      string: '{{user_input}}',
      parameters: { temperature: 1 },
      model: 'gpt-4o-mini',
      virtual_key: 'main-258f4d',
      version_description: 'v2',
      functions: [],
      tools: [],
      tool_choice: 'none',
      is_raw_template: 0,
      prompt_metadata: { team: 'a' },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(
      (
        await admin.put(`/v1/prompts/${created.body.id}/versions/${updated.body.prompt_version_id}`, {
          label_id: label.body.id,
        })
      ).status,
    ).toBe(200);
    expect((await admin.put(`/v1/prompts/${created.body.id}/makeDefault`, { version: 2 })).status).toBe(200);
    const rendered = await admin.post(`/v1/prompts/${created.body.id}/render`, {
      variables: { user_input: 'Hello world' },
      max_completion_tokens: 250,
      presence_penalty: 0.2,
    });
    expect(rendered.body.data).toMatchObject({
      model: 'gpt-4o-mini',
      max_completion_tokens: 250,
      presence_penalty: 0.2,
    });
    expect(
      (
        await admin.put(`/v1/prompts/partials/${partial.body.id}`, {
          name: 'Intro 2',
          string: 'Hi',
          description: 'v2',
          status: 'active',
        })
      ).status,
    ).toBe(200);
    expect((await admin.put(`/v1/prompts/partials/${partial.body.id}/makeDefault`, { version: 2 })).status).toBe(200);
    expect(
      (await admin.put(`/v1/labels/${label.body.id}`, { name: 'beta-2', description: 'x', color_code: '#000000' }))
        .status,
    ).toBe(200);
    expect(
      (await admin.get(`/v1/labels/${label.body.id}?organisation_id=${t.server.bootstrap.organisationId}`)).status,
    ).toBe(200);
    expect((await admin.put(`/v1/collections/${collection.body.id}`, { name: 'Renamed' })).status).toBe(200);
    const listed = await admin.get(
      `/v1/prompts?collection_id=${collection.body.id}&workspace_id=${workspace}&current_page=0&page_size=10&search=exam`,
    );
    expect(listed.body.total).toBe(1);
  });
});
