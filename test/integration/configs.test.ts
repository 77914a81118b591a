import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const CONFIG_SCOPES = ['configs.create', 'configs.read', 'configs.list', 'configs.update', 'configs.delete'];

const fallback = {
  strategy: { mode: 'fallback', on_status_codes: [429, 500] },
  retry: { attempts: 2, on_status_codes: [429] },
  cache: { mode: 'simple', max_age: 3600 },
  targets: [
    { provider: '@openai-prod', override_params: { model: 'gpt-4o-mini' } },
    { provider: 'openai', virtual_key: 'main-258f4d' },
  ],
};
const single = { provider: '@openai-prod', override_params: { model: 'gpt-4o-mini' } };

describe('configs: create, read, versions', () => {
  it('creates a config, serves its latest version, and keeps earlier versions readable', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await admin.post('/v1/configs', { name: 'Prod fallback', slug: 'prod-fallback', config: fallback });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['data', 'id', 'object', 'slug', 'success', 'version_id']);
    // The reference's wrapper sits beside svcgw's fields.
    expect(created.body).toMatchObject({
      success: true,
      data: { id: created.body.id, version_id: created.body.version_id },
    });
    expect(created.body).toMatchObject({ slug: 'prod-fallback', object: 'config' });

    const got = await admin.get('/v1/configs/prod-fallback');
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: created.body.id,
      slug: 'prod-fallback',
      name: 'Prod fallback',
      status: 'active',
      version_id: created.body.version_id,
      version: 1,
      workspace_id: t.server.bootstrap.workspaceId,
      organisation_id: t.server.bootstrap.organisationId,
      config: fallback,
      object: 'config',
    });
    expect((await admin.get(`/v1/configs/${created.body.id}`)).body.slug).toBe('prod-fallback');

    const updated = await admin.put('/v1/configs/prod-fallback', { config: single, name: 'Single' });
    expect(updated.status).toBe(200);
    expect(updated.body.id).toBe(created.body.id);
    expect(updated.body.version_id).not.toBe(created.body.version_id);
    const latest = (await admin.get('/v1/configs/prod-fallback')).body;
    expect(latest).toMatchObject({ name: 'Single', version: 2, version_id: updated.body.version_id });
    expect(latest.config).toEqual(single);
    // A stored config holds no provider key: keys live encrypted in providers and integrations.
    const inline = await admin.put('/v1/configs/prod-fallback', {
      config: { provider: 'openai', api_key: 'sk-inline-secret-123' },
    });
    expect(inline.status).toBe(400);
    expect(inline.body.error).toMatchObject({ code: 'AB01_INVALID_CONFIG', param: 'config.api_key' });
    expect(JSON.stringify(await t.server.db.selectFrom('config_versions').selectAll().execute())).not.toContain(
      'sk-inline-secret-123',
    );
    // Nor credentials inside a custom host's URL.
    const userinfo = await admin.put('/v1/configs/prod-fallback', {
      config: { provider: 'openai', custom_host: 'https://ops:hunter2-in-url@llm.internal/v1' },
    });
    expect(userinfo.status).toBe(400);
    expect(userinfo.body.error).toMatchObject({ code: 'AB01_INVALID_CONFIG', param: 'config.custom_host' });
    expect(JSON.stringify(userinfo.body)).not.toContain('hunter2-in-url');
    expect(JSON.stringify(await t.server.db.selectFrom('config_versions').selectAll().execute())).not.toContain(
      'hunter2',
    );

    // A rename alone makes no new version.
    const renamed = await admin.put('/v1/configs/prod-fallback', { name: 'Renamed' });
    expect(renamed.body.version_id).toBe(updated.body.version_id);

    const versions = await admin.get('/v1/configs/prod-fallback/versions');
    expect(versions.status).toBe(200);
    expect(versions.body).toMatchObject({ object: 'list', total: 2 });
    expect(versions.body.data.map((v: any) => [v.version, v.is_latest])).toEqual([
      [2, true],
      [1, false],
    ]);
    const first = await admin.get('/v1/configs/prod-fallback/versions/1');
    expect(first.body).toMatchObject({
      version: 1,
      version_id: created.body.version_id,
      config: fallback,
      config_id: created.body.id,
      object: 'config_version',
    });
    expect(first.body.created_by_key_id).toBeTruthy();
    expect((await admin.get(`/v1/configs/prod-fallback/versions/${created.body.version_id}`)).body.version).toBe(1);
    for (const unknown of ['3', '0', 'latest', '00000000-0000-4000-8000-000000000000']) {
      const res = await admin.get(`/v1/configs/prod-fallback/versions/${unknown}`);
      expect(res.status, unknown).toBe(404);
    }
  });

  it('generates a slug, defaults to the default workspace, and refuses a taken slug', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const a = await admin.post('/v1/configs', { name: 'My Config!', config: single });
    expect(a.body.slug).toMatch(/^my-config-[0-9a-f]{6}$/);
    await createWorkspace(admin, 'Team A', 'team-a');
    const b = await admin.post('/v1/configs', { name: 'B', slug: 'bee', workspace_id: 'team-a', config: single });
    expect((await admin.get('/v1/configs/bee')).body.workspace_id).toBe(
      (await admin.get('/v1/workspaces/team-a')).body.id,
    );
    const dup = await admin.post('/v1/configs', { name: 'B2', slug: 'bee', config: single });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'CONFLICT', param: 'slug' });

    // Archiving frees the slug; the archived one stays readable by id.
    expect((await admin.delete('/v1/configs/bee')).status).toBe(200);
    const again = await admin.post('/v1/configs', { name: 'B3', slug: 'bee', config: single });
    expect(again.status).toBe(200);
    expect((await admin.get('/v1/configs/bee')).body.id).toBe(again.body.id);
    expect((await admin.get(`/v1/configs/${b.body.id}`)).body.status).toBe('archived');
    // Restoring the archived one would take an active slug.
    expect((await admin.put(`/v1/configs/${b.body.id}`, { status: 'active' })).status).toBe(409);

    for (const body of [
      { name: 'x', slug: 'Upper', config: single },
      { name: '', config: single },
      { name: 'x', config: single, extra: 1 },
    ]) {
      const res = await admin.post('/v1/configs', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
    }
  });

  it('lists with filters and pages, and archives on delete', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        (
          await admin.post('/v1/configs', {
            name: `c${i}`,
            slug: `c${i}`,
            workspace_id: i === 3 ? 'team-a' : 'default',
            config: single,
          })
        ).body.id,
      );
    await admin.delete('/v1/configs/c0');
    const all = await admin.get('/v1/configs');
    expect(all.body).toMatchObject({ object: 'list', total: 3 });
    expect(all.body.data.map((c: any) => c.slug)).toEqual(['c1', 'c2', 'c3']);
    expect(all.body.data[0]).toMatchObject({ version: 1, object: 'config' });
    expect(all.body.data[0].config).toBeUndefined();
    expect((await admin.get('/v1/configs?status=archived')).body.data.map((c: any) => c.id)).toEqual([ids[0]]);
    expect((await admin.get('/v1/configs?workspace_id=team-a')).body.data.map((c: any) => c.slug)).toEqual(['c3']);
    expect((await admin.get('/v1/configs?page_size=1&current_page=1')).body.data.map((c: any) => c.slug)).toEqual([
      'c2',
    ]);
    expect((await admin.get('/v1/configs?status=gone')).status).toBe(400);
    // An archived config is still found by its slug; deleting it again is a no-op.
    expect((await admin.delete('/v1/configs/c0')).status).toBe(200);
    expect((await admin.get('/v1/configs/c0')).body).toMatchObject({ id: ids[0], status: 'archived' });
  });
});

describe('configs: AB01 validation', () => {
  it('answers 400 AB01_INVALID_CONFIG with the path of the first problem and lists every problem', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const bad = {
      strategy: { mode: 'loadbalance' },
      targets: [{ provider: '@a' }, { provider: '@b', weight: -2 }],
      cache: { mode: 'fuzzy' },
    };
    const res = await admin.post('/v1/configs', { name: 'bad', config: bad });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'AB01_INVALID_CONFIG',
      type: 'invalid_request_error',
      param: 'config.cache.mode',
    });
    expect(res.body.error.message).toContain('config.cache.mode');
    expect(res.body.error.message).toContain('config.targets[1].weight');

    const cases: Array<[unknown, string]> = [
      [undefined, 'config'],
      ['text', 'config'],
      [
        { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai' }, { provider: 'nope' }] },
        'config.targets[1].provider',
      ],
      [{ provider: 'openai', retry: { attempts: 11 } }, 'config.retry.attempts'],
      [{ provider: 'openai', request_timeout: 0 }, 'config.request_timeout'],
      [{ provider: 'openai', colour: 'red' }, 'config.colour'],
    ];
    for (const [config, param] of cases) {
      const r = await admin.post('/v1/configs', { name: 'bad', ...(config === undefined ? {} : { config }) });
      expect(r.status, JSON.stringify(config)).toBe(400);
      expect(r.body.error.code).toMatch(/^AB01/);
      expect(r.body.error.param, JSON.stringify(config)).toBe(param);
    }
    expect((await admin.get('/v1/configs')).body.total).toBe(0);

    const { slug } = (await admin.post('/v1/configs', { name: 'ok', config: single })).body;
    const put = await admin.put(`/v1/configs/${slug}`, { config: { strategy: { mode: 'fallback' } } });
    expect(put.status).toBe(400);
    expect(put.body.error).toMatchObject({ code: 'AB01_INVALID_CONFIG', param: 'config.targets' });
    expect((await admin.get(`/v1/configs/${slug}/versions`)).body.total).toBe(1);
  });
});

describe('configs: isolation, 404 and audit', () => {
  it('pins workspace keys to their workspace', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    await createWorkspace(admin, 'Team B', 'team-b');
    const a = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: CONFIG_SCOPES })).key,
    );
    const ownA = await a.post('/v1/configs', { name: 'A', slug: 'cfg-a', config: single });
    expect(ownA.status).toBe(200);
    expect((await a.get('/v1/configs/cfg-a')).body.workspace_id).toBe(
      (await admin.get('/v1/workspaces/team-a')).body.id,
    );
    const intoB = await a.post('/v1/configs', { name: 'x', workspace_id: 'team-b', config: single });
    expect(intoB.status).toBe(403);
    expect(intoB.body.error.code).toBe('WORKSPACE_FORBIDDEN');
    await admin.post('/v1/configs', { name: 'B', slug: 'cfg-b', workspace_id: 'team-b', config: single });

    expect((await a.get('/v1/configs')).body.data.map((c: any) => c.slug)).toEqual(['cfg-a']);
    expect((await a.get('/v1/configs?workspace_id=team-b')).status).toBe(403);
    expect((await a.get('/v1/configs/cfg-b')).status).toBe(403);
    expect((await a.get('/v1/configs/cfg-b/versions')).status).toBe(403);
    expect((await a.get('/v1/configs/cfg-b/versions/1')).status).toBe(403);
    expect((await a.put('/v1/configs/cfg-b', { name: 'mine' })).status).toBe(403);
    expect((await a.delete('/v1/configs/cfg-b')).status).toBe(403);
    expect((await admin.get('/v1/configs/cfg-b')).body).toMatchObject({ name: 'B', status: 'active' });

    const readOnly = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['configs.read'] })).key,
    );
    expect((await readOnly.post('/v1/configs', { name: 'x', config: single })).status).toBe(403);
  });

  it('answers 404 for unknown configs and audits every mutation with secrets redacted', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    for (const unknown of ['00000000-0000-4000-8000-000000000000', 'no-such-config']) {
      expect((await admin.get(`/v1/configs/${unknown}`)).status).toBe(404);
      expect((await admin.get(`/v1/configs/${unknown}/versions`)).status).toBe(404);
      expect((await admin.put(`/v1/configs/${unknown}`, { name: 'x' })).status).toBe(404);
      const del = await admin.delete(`/v1/configs/${unknown}`);
      expect(del.status).toBe(404);
      expect(del.body.error.code).toBe('NOT_FOUND');
    }

    const { id } = (await admin.post('/v1/configs', { name: 'Audited', slug: 'audited', config: single })).body;
    await admin.put('/v1/configs/audited', { config: fallback });
    await admin.delete('/v1/configs/audited');
    await admin.get('/v1/configs/audited');
    const records = (await admin.get('/v1/audit-logs?resource_type=config')).body.data.reverse();
    expect(records.map((r: any) => [r.action, r.method, r.response_status_code])).toEqual([
      ['update', 'PUT', 404],
      ['delete', 'DELETE', 404],
      ['update', 'PUT', 404],
      ['delete', 'DELETE', 404],
      ['create', 'POST', 200],
      ['update', 'PUT', 200],
      ['delete', 'DELETE', 200],
    ]);
    expect(records.slice(4).map((r: any) => r.resource_id)).toEqual([id, id, id]);
    expect(records[4].workspace_id).toBe(t.server.bootstrap.workspaceId);
    expect(JSON.stringify(records)).not.toContain('sk-inline-secret-123');
  });
});
