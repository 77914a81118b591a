import { describe, expect, it } from 'vitest';
import { WORKSPACE_SCOPES } from '../../src/auth/scopes.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient, type JsonResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const regex = { id: 'default.regexMatch', parameters: { rule: '^[a-z ]+$' } };
const words = { id: 'default.wordCount', parameters: { minWords: 1, maxWords: 200 }, name: 'length' };
const contains = { id: 'default.contains', parameters: { operator: 'any', words: ['secret'] } };
const actions = {
  deny: true,
  async: false,
  on_success: { feedback: { value: 5, weight: 1 } },
  on_fail: { feedback: { value: -5, weight: 1 } },
};

function refused(res: JsonResponse, status: number, code: string, param?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (param !== undefined) expect(res.body.error.param).toBe(param);
}

/** Two workspaces, each with a workspace key (every workspace scope) of a workspace admin. */
async function twoTeams(t: TestServer) {
  const admin = apiClient(t.baseUrl, t.adminKey);
  const team = async (slug: string) => {
    const ws = await createWorkspace(admin, slug, slug);
    const userId = await addUser(t.server.db, t.server.bootstrap.organisationId, 'member', [
      { workspaceId: ws.id, role: 'admin' },
    ]);
    const key = await createWorkspaceKey(admin, { workspace_id: slug, scopes: [...WORKSPACE_SCOPES], user_id: userId });
    return { id: ws.id, slug, client: apiClient(t.baseUrl, key.key) };
  };
  return { admin, a: await team('team-a'), b: await team('team-b') };
}

const create = (client: ApiClient, body: Record<string, unknown>) =>
  client.post('/v1/guardrails', { name: 'Guard', checks: [regex], actions, ...body });

describe('guardrails: the resource', () => {
  it('creates, reads by id and slug, versions every update, lists and archives', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const created = await create(admin, { name: 'No secrets', slug: 'no-secrets', checks: [regex, words] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ slug: 'no-secrets', object: 'guardrail' });
    expect(Object.keys(created.body).sort()).toEqual(['id', 'object', 'slug', 'version_id']);

    const bySlug = await admin.get('/v1/guardrails/no-secrets');
    expect(bySlug.status).toBe(200);
    expect(bySlug.body).toMatchObject({
      id: created.body.id,
      name: 'No secrets',
      organisation_id: t.server.bootstrap.organisationId,
      workspace_id: null,
      status: 'active',
      version_id: created.body.version_id,
      version: 1,
      updated_by: null,
      checks: [
        { id: 'default.regexMatch', parameters: { rule: '^[a-z ]+$' }, is_enabled: true },
        { id: 'default.wordCount', parameters: { minWords: 1, maxWords: 200 }, name: 'length', is_enabled: true },
      ],
      actions: {
        deny: true,
        async: false,
        on_success: { feedback: { value: 5, weight: 1, metadata: '' } },
        on_fail: { feedback: { value: -5, weight: 1, metadata: '' } },
      },
    });
    expect((await admin.get(`/v1/guardrails/${created.body.id}`)).body.slug).toBe('no-secrets');

    const updated = await admin.put('/v1/guardrails/no-secrets', { checks: [{ ...contains, is_enabled: false }] });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.id).toBe(created.body.id);
    expect(updated.body.version_id).not.toBe(created.body.version_id);
    const renamed = await admin.put(`/v1/guardrails/${created.body.id}`, { name: 'Renamed' });
    const latest = (await admin.get('/v1/guardrails/no-secrets')).body;
    expect(latest).toMatchObject({ name: 'Renamed', version: 3, version_id: renamed.body.version_id });
    expect(latest.checks).toEqual([{ ...contains, is_enabled: false }]);
    expect(latest.updated_by).not.toBeNull();

    const versions = await admin.get('/v1/guardrails/no-secrets/versions');
    expect(versions.body.data.map((v: any) => [v.version, v.name, v.checks.length, v.is_latest])).toEqual([
      [3, 'Renamed', 1, true],
      [2, 'No secrets', 1, false],
      [1, 'No secrets', 2, false],
    ]);

    await create(admin, { name: 'Second' });
    const list = await admin.get('/v1/guardrails?page_size=1');
    expect(list.body).toMatchObject({ object: 'list', total: 2 });
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).not.toHaveProperty('checks');
    refused(await admin.get('/v1/guardrails?page_size=0'), 400, 'INVALID_REQUEST', 'page_size');
    refused(await admin.get('/v1/guardrails?page_size=1001'), 400, 'INVALID_REQUEST', 'page_size');

    const deleted = await admin.delete('/v1/guardrails/no-secrets');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toBeNull();
    expect((await admin.get('/v1/guardrails')).body.total).toBe(1);
    expect((await admin.get('/v1/guardrails?status=archived')).body.total).toBe(1);
    expect((await admin.get(`/v1/guardrails/${created.body.id}`)).body.status).toBe('archived');
    // The slug is free again.
    expect((await create(admin, { slug: 'no-secrets' })).status).toBe(200);
    refused(await create(admin, { slug: 'no-secrets' }), 409, 'CONFLICT', 'slug');
  });

  it("accepts the reference's create examples, {onFail, message} included", async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const res = await admin.post('/v1/guardrails', {
      name: 'Content filter',
      organisation_id: t.server.bootstrap.organisationId,
      checks: [{ id: 'default.contains', parameters: { operator: 'any', words: ['confidential'] } }],
      actions: { onFail: 'block', message: 'Content policy violation' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.slug).toMatch(/^pg-content-filter-[0-9a-f]{6}$/);
    const got = (await admin.get(`/v1/guardrails/${res.body.slug}`)).body;
    expect(got.actions).toEqual({
      deny: true,
      async: false,
      on_success: { feedback: { value: 5, weight: 1, metadata: '' } },
      on_fail: { feedback: { value: -5, weight: 1, metadata: '' } },
      message: 'Content policy violation',
    });
    const warn = await create(admin, { actions: { onFail: 'warn' } });
    expect((await admin.get(`/v1/guardrails/${warn.body.id}`)).body.actions.deny).toBe(false);
    refused(
      await create(admin, { actions: { onFail: 'block', deny: false } }),
      400,
      'INVALID_REQUEST',
      'actions.onFail',
    );
    refused(await create(admin, { actions: { onFail: 'explode' } }), 400, 'INVALID_REQUEST', 'actions.onFail');
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    refused(await create(admin, { checks: [] }), 400, 'INVALID_REQUEST', 'checks');
    refused(await admin.post('/v1/guardrails', { name: 'x', actions }), 400, 'INVALID_REQUEST', 'checks');
    refused(await admin.post('/v1/guardrails', { name: 'x', checks: [regex] }), 400, 'INVALID_REQUEST', 'actions');
    const vendor = await create(admin, { checks: [regex, { id: 'vendor.moderateContent', parameters: {} }] });
    refused(vendor, 400, 'INVALID_REQUEST', 'checks[1].id');
    expect(vendor.body.error.message).toContain('vendor.moderateContent');
    expect(vendor.body.error.message).toContain('default.regexMatch');
    refused(
      await create(admin, { checks: [{ id: 'default.regexMatch', parameters: 'x' }] }),
      400,
      'INVALID_REQUEST',
      'checks[0].parameters',
    );
    refused(
      await create(admin, { checks: [{ ...regex, is_enabled: 'yes' }] }),
      400,
      'INVALID_REQUEST',
      'checks[0].is_enabled',
    );
    refused(await create(admin, { checks: [{ ...regex, extra: 1 }] }), 400, 'INVALID_REQUEST');
    refused(await create(admin, { name: 42 }), 400, 'INVALID_REQUEST', 'name');
    refused(await create(admin, { actions: { deny: 'yes' } }), 400, 'INVALID_REQUEST', 'actions.deny');
    refused(await create(admin, { slug: 'Not A Slug' }), 400, 'INVALID_REQUEST', 'slug');
    refused(await create(admin, { organisation_id: 'another-org' }), 404, 'NOT_FOUND', 'organisation_id');
    refused(await admin.put('/v1/guardrails/nope', { name: 'x' }), 404, 'NOT_FOUND', 'guardrailId');
    expect((await admin.get('/v1/guardrails')).body.total).toBe(0);
  });

  it('is off with GUARDRAILS_ENABLED=OFF', async () => {
    const t = await startTestServer({ env: { GUARDRAILS_ENABLED: 'OFF' } });
    const admin = apiClient(t.baseUrl, t.adminKey);
    refused(await admin.get('/v1/guardrails'), 403, 'FEATURE_DISABLED');
    refused(await create(admin, {}), 403, 'FEATURE_DISABLED');
    // Nothing may name guardrails while they are off.
    refused(
      await admin.post('/v1/configs', {
        name: 'c',
        config: { input_guardrails: [{ 'default.regexMatch': { rule: 'a' } }] },
      }),
      403,
      'FEATURE_DISABLED',
      'config.input_guardrails[0]',
    );
  });
});

describe('guardrails: who may do what', () => {
  it('keeps workspaces apart and lets workspaces read, not change, the organisation guardrails', async () => {
    const t = await startTestServer();
    const { admin, a, b } = await twoTeams(t);
    const org = await create(admin, { name: 'Org wide', slug: 'org-wide' });
    const own = await create(a.client, { name: 'A only', slug: 'a-only' });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect((await a.client.get('/v1/guardrails/a-only')).body.workspace_id).toBe(a.id);
    const other = await create(b.client, { name: 'B only', slug: 'b-only' });

    const listed = await a.client.get('/v1/guardrails');
    expect(listed.body.data.map((g: any) => g.slug).sort()).toEqual(['a-only', 'org-wide']);
    expect((await admin.get('/v1/guardrails')).body.total).toBe(3);
    expect((await admin.get('/v1/guardrails?workspace_id=team-b')).body.data.map((g: any) => g.slug).sort()).toEqual([
      'b-only',
      'org-wide',
    ]);
    refused(await a.client.get('/v1/guardrails?workspace_id=team-b'), 403, 'WORKSPACE_FORBIDDEN');

    expect((await a.client.get('/v1/guardrails/org-wide')).status).toBe(200);
    refused(await a.client.put('/v1/guardrails/org-wide', { name: 'mine' }), 403, 'WORKSPACE_FORBIDDEN');
    refused(await a.client.delete('/v1/guardrails/org-wide'), 403, 'WORKSPACE_FORBIDDEN');
    refused(await a.client.get(`/v1/guardrails/${other.body.id}`), 403, 'WORKSPACE_FORBIDDEN');
    refused(await a.client.get('/v1/guardrails/b-only/versions'), 403, 'WORKSPACE_FORBIDDEN');
    refused(await a.client.put('/v1/guardrails/b-only', { name: 'taken' }), 403, 'WORKSPACE_FORBIDDEN');
    refused(await a.client.delete('/v1/guardrails/b-only'), 403, 'WORKSPACE_FORBIDDEN');
    refused(await create(a.client, { workspace_id: 'team-b' }), 403, 'WORKSPACE_FORBIDDEN');
    expect((await b.client.get('/v1/guardrails/b-only')).body).toMatchObject({ name: 'B only', version: 1 });
    expect((await admin.get('/v1/guardrails/org-wide')).body.version_id).toBe(org.body.version_id);
    // An admin key files one in a workspace.
    const filed = await create(admin, { workspace_id: 'team-b' });
    expect((await b.client.get(`/v1/guardrails/${filed.body.id}`)).body.workspace_id).toBe(b.id);
  });

  it('needs the guardrails scopes: a member key reads but does not write', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await create(admin, { slug: 'org-guard' });
    const ws = await createWorkspace(admin, 'Team', 'team');
    const reader = await createWorkspaceKey(admin, {
      workspace_id: 'team',
      scopes: ['guardrails.list', 'guardrails.read'],
    });
    const client = apiClient(t.baseUrl, reader.key);
    expect((await client.get('/v1/guardrails')).body.total).toBe(1);
    expect((await client.get('/v1/guardrails/org-guard')).status).toBe(200);
    refused(await create(client, {}), 403, 'MISSING_SCOPE');
    expect(ws.id).toBeTruthy();
  });

  it('records every change in the audit log, without secrets, and never shows secret parameters', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const webhook = {
      id: 'default.webhook',
      parameters: {
        webhookURL: 'https://hooks.example.test/check',
        headers: { Authorization: 'Bearer hook-secret-123' },
      },
    };
    const created = await create(admin, { slug: 'hooked', checks: [webhook] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const got = (await admin.get('/v1/guardrails/hooked')).body;
    expect(JSON.stringify(got)).not.toContain('hook-secret-123');
    expect(got.checks[0].parameters.headers.Authorization).toBe('[REDACTED]');
    // What was read can be sent back: the stored secret stays.
    await admin.put('/v1/guardrails/hooked', { checks: got.checks });
    const stored = await t.server.db
      .selectFrom('guardrail_versions')
      .select('checks')
      .orderBy('version', 'desc')
      .executeTakeFirstOrThrow();
    expect(stored.checks).toContain('hook-secret-123');
    await admin.delete('/v1/guardrails/hooked');

    const records = (await admin.get('/v1/audit-logs?resource_type=guardrail')).body;
    const mine = (records.records ?? records.data).filter((r: any) => r.resource_type === 'guardrail');
    expect(mine.map((r: any) => r.action).sort()).toEqual(['create', 'delete', 'update']);
    expect(mine.every((r: any) => r.resource_id === created.body.id)).toBe(true);
    expect(JSON.stringify(records)).not.toContain('hook-secret-123');
    expect(t.logLines.join('\n')).not.toContain('hook-secret-123');
  });
});
