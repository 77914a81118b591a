import { describe, expect, it } from 'vitest';
import { WORKSPACE_SCOPES } from '../../src/auth/scopes.js';
import { createManualClock } from '../../src/lib/clock.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient, type ApiClient, type JsonResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const regex = { id: 'default.regexMatch', parameters: { rule: '^[a-z ]+$' } };
const actions = { deny: true };

function refused(res: JsonResponse, status: number, code: string, param?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (param !== undefined) expect(res.body.error.param).toBe(param);
}

async function setup(t: TestServer) {
  const admin = apiClient(t.baseUrl, t.adminKey);
  const team = async (slug: string) => {
    const ws = await createWorkspace(admin, slug, slug);
    const userId = await addUser(t.server.db, t.server.bootstrap.organisationId, 'member', [
      { workspaceId: ws.id, role: 'admin' },
    ]);
    const key = await createWorkspaceKey(admin, { workspace_id: slug, scopes: [...WORKSPACE_SCOPES], user_id: userId });
    return { id: ws.id, slug, client: apiClient(t.baseUrl, key.key) };
  };
  const a = await team('team-a');
  const b = await team('team-b');
  const guard = async (client: ApiClient, slug: string) => {
    const res = await client.post('/v1/guardrails', { name: slug, slug, checks: [regex], actions });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { id: string; slug: string; version_id: string };
  };
  return {
    admin,
    a,
    b,
    org: await guard(admin, 'org-guard'),
    own: await guard(a.client, 'a-guard'),
    foreign: await guard(b.client, 'b-guard'),
  };
}

const target = { provider: 'openai', custom_host: 'https://llm.example.test/v1' };

describe('configs name guardrails', () => {
  it('saves references by slug or id, inline guardrails and hook objects, on the config and on targets', async () => {
    const t = await startTestServer();
    const { a, org, own } = await setup(t);
    const config = {
      input_guardrails: [
        'org-guard',
        own.id,
        { 'default.contains': { operator: 'any', words: ['secret'] }, deny: true },
      ],
      output_guardrails: [{ wordCount: { minWords: 1, maxWords: 50 }, on_fail: { feedback: { value: -10 } } }],
      before_request_hooks: [{ type: 'guardrail', id: 'inline-1', checks: [regex], deny: true }],
      after_request_hooks: [{ id: 'a-guard', async: true }],
      strategy: { mode: 'fallback' },
      targets: [target, { ...target, input_guardrails: ['a-guard'], output_guardrails: [org.slug] }],
    };
    const res = await a.client.post('/v1/configs', { name: 'guarded', slug: 'guarded', config });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await a.client.get('/v1/configs/guarded')).body.config).toEqual(config);
  });

  it('refuses missing, archived and other workspaces’ guardrails, and bad inline checks, naming the place', async () => {
    const t = await startTestServer();
    const { admin, a } = await setup(t);
    const save = (client: ApiClient, config: unknown) => client.post('/v1/configs', { name: 'c', config });
    refused(
      await save(a.client, { input_guardrails: ['no-such-guard'] }),
      404,
      'NOT_FOUND',
      'config.input_guardrails[0]',
    );
    refused(
      await save(a.client, { input_guardrails: ['org-guard'], output_guardrails: ['org-guard', 'b-guard'] }),
      403,
      'WORKSPACE_FORBIDDEN',
      'config.output_guardrails[1]',
    );
    refused(
      await save(a.client, {
        strategy: { mode: 'fallback' },
        targets: [target, { ...target, before_request_hooks: [{ id: 'b-guard' }] }],
      }),
      403,
      'WORKSPACE_FORBIDDEN',
      'config.targets[1].before_request_hooks[0]',
    );
    // Whoever saves it: the config runs in its workspace.
    refused(
      await admin.post('/v1/configs', { name: 'c', workspace_id: 'team-a', config: { input_guardrails: ['b-guard'] } }),
      403,
      'WORKSPACE_FORBIDDEN',
      'config.input_guardrails[0]',
    );
    // Secrets of inline checks are not stored in configs (they would be shown back): guardrails keep them write-only.
    const webhook = { webhookURL: 'https://hooks.example.test/check', headers: { 'x-hook-token': 'hook-secret' } };
    refused(
      await save(a.client, { output_guardrails: [{ 'default.webhook': webhook }] }),
      400,
      'AB01_INVALID_CONFIG',
      'config.output_guardrails[0]',
    );
    const saved = await save(a.client, { input_guardrails: ['a-guard'] });
    refused(
      await a.client.put(`/v1/configs/${saved.body.slug}`, { config: { input_guardrails: ['b-guard'] } }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
    await a.client.delete('/v1/guardrails/a-guard');
    refused(await save(a.client, { input_guardrails: ['a-guard'] }), 404, 'NOT_FOUND', 'config.input_guardrails[0]');
    refused(
      await save(a.client, {
        after_request_hooks: [{ id: 'org-guard', guardrail_version_id: '00000000-0000-4000-8000-000000000000' }],
      }),
      404,
      'NOT_FOUND',
      'config.after_request_hooks[0].guardrail_version_id',
    );

    const invalid: Array<[unknown, string]> = [
      [{ input_guardrails: [{ 'vendor.moderateContent': {} }] }, 'config.input_guardrails[0].vendor.moderateContent'],
      [{ input_guardrails: [{ regexMatch: 'x' }] }, 'config.input_guardrails[0].regexMatch'],
      [{ input_guardrails: [{ deny: true }] }, 'config.input_guardrails[0]'],
      [{ input_guardrails: [42] }, 'config.input_guardrails[0]'],
      [{ input_guardrails: 'org-guard' }, 'config.input_guardrails'],
      [{ before_request_hooks: [{ type: 'guardrail' }] }, 'config.before_request_hooks[0].checks'],
      [
        { before_request_hooks: [{ checks: [{ id: 'pillar.scanPrompt' }] }] },
        'config.before_request_hooks[0].checks[0].id',
      ],
      [{ before_request_hooks: [{ checks: [regex], deny: 'yes' }] }, 'config.before_request_hooks[0].deny'],
      [{ before_request_hooks: [{ checks: [regex], type: 'mutator' }] }, 'config.before_request_hooks[0].type'],
    ];
    for (const [config, param] of invalid) {
      const res = await save(a.client, config);
      refused(res, 400, 'AB01_INVALID_CONFIG', param);
    }
    const vendor = await save(a.client, { input_guardrails: [{ 'vendor.moderateContent': {} }] });
    expect(vendor.body.error.message).toContain('default.webhook');
  });

  it('validates guardrails in an inline x-service-config at request time', async () => {
    const g = await startGateway();
    const send = (config: unknown) =>
      fetch(`${g.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          ...g.viaMock,
          'x-service-api-key': g.adminKey,
          'content-type': 'application/json',
          'x-service-config': JSON.stringify(config),
        },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      });
    const bad = await send({ input_guardrails: [{ 'default.nope': {} }] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toMatchObject({
      code: 'AB01_INVALID_CONFIG',
      param: 'x-service-config.input_guardrails[0].default.nope',
    });
    expect(g.mock.requests).toHaveLength(0);
    const good = await send({ input_guardrails: [{ 'default.regexMatch': { rule: 'h' } }] });
    expect(good.status).toBe(200);
  });
});

describe('workspace defaults', () => {
  it('sets, shows and clears default guardrails, with the same checks as configs', async () => {
    const t = await startTestServer();
    const { admin, a } = await setup(t);
    const put = (defaults: unknown) => admin.put('/v1/workspaces/team-a', { defaults });
    expect((await admin.get('/v1/workspaces/team-a')).body.defaults).toEqual({
      input_guardrails: [],
      output_guardrails: [],
      allowed_models: null,
      metadata: {},
    });
    const set = await put({
      input_guardrails: ['org-guard', 'a-guard'],
      output_guardrails: [{ 'default.wordCount': { minWords: 1, maxWords: 9 } }],
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await a.client.get('/v1/workspaces/team-a')).body.defaults).toEqual({
      input_guardrails: ['org-guard', 'a-guard'],
      output_guardrails: [{ 'default.wordCount': { minWords: 1, maxWords: 9 } }],
      allowed_models: null,
      metadata: {},
    });
    // Model limits set alone leave the guardrails as they are, and the other way round.
    expect((await put({ allowed_models: ['gpt-4o*'] })).status).toBe(200);
    expect((await put({ output_guardrails: [] })).status).toBe(200);
    expect((await admin.get('/v1/workspaces/team-a')).body.defaults).toEqual({
      input_guardrails: ['org-guard', 'a-guard'],
      output_guardrails: [],
      allowed_models: ['gpt-4o*'],
      metadata: {},
    });
    refused(await put({ input_guardrails: ['b-guard'] }), 403, 'WORKSPACE_FORBIDDEN', 'defaults.input_guardrails[0]');
    refused(await put({ output_guardrails: ['missing'] }), 404, 'NOT_FOUND', 'defaults.output_guardrails[0]');
    refused(
      await put({ input_guardrails: [{ 'default.bogus': {} }] }),
      400,
      'INVALID_REQUEST',
      'defaults.input_guardrails[0].default.bogus',
    );
    refused(await put({ bogus: {} }), 400, 'INVALID_REQUEST');
    // A new workspace can only start with the organisation's guardrails.
    const made = await admin.post('/v1/workspaces', {
      name: 'New',
      slug: 'new',
      defaults: { input_guardrails: ['org-guard'] },
    });
    expect(made.body.defaults.input_guardrails).toEqual(['org-guard']);
    refused(
      await admin.post('/v1/workspaces', { name: 'Newer', defaults: { input_guardrails: ['a-guard'] } }),
      403,
      'WORKSPACE_FORBIDDEN',
      'defaults.input_guardrails[0]',
    );
    expect((await put(null)).status).toBe(200);
    expect((await admin.get('/v1/workspaces/team-a')).body.defaults).toEqual({
      input_guardrails: [],
      output_guardrails: [],
      allowed_models: null,
      metadata: {},
    });
  });
});

describe('the lookup for the gateway', () => {
  it('resolves workspace defaults and config guardrails, sees changes at once, and caches', async () => {
    const clock = createManualClock();
    const t = await startTestServer({ clock });
    const { admin, a, org, own } = await setup(t);
    await admin.put('/v1/workspaces/team-a', { defaults: { input_guardrails: ['org-guard'] } });
    const lookup = t.server.guardrails;
    const organisationId = t.server.bootstrap.organisationId;
    const node = {
      input_guardrails: [{ 'default.contains': { operator: 'any', words: ['x'] }, id: 'inline' }],
      output_guardrails: ['b-guard'],
      after_request_hooks: [{ id: 'a-guard', deny: false }],
    };
    const first = await lookup.forRequest({ organisationId, workspaceId: a.id, node });
    expect(first.before.map((g) => [g.slug ?? g.name, g.source])).toEqual([
      ['org-guard', 'workspace_defaults.input_guardrails[0]'],
      ['inline', 'input_guardrails[0]'],
    ]);
    expect(first.before[0]).toMatchObject({
      id: org.id,
      version_id: org.version_id,
      version: 1,
      actions: { deny: true },
    });
    expect(first.before[0]!.checks).toEqual([{ ...regex, is_enabled: true, check: 'default.regexMatch' }]);
    expect(first.before[1]!.actions).toMatchObject({ deny: false, on_fail: { feedback: { value: -5 } } });
    // The hook object's deny replaces the stored guardrail's own for this config.
    expect(first.after.map((g) => [g.id, g.actions.deny])).toEqual([[own.id, false]]);
    // Another workspace's guardrail is not run: the caller is told it is missing.
    expect(first.missing).toEqual([{ ref: 'b-guard', source: 'output_guardrails[0]' }]);

    // A change made through the API is seen at once.
    await admin.put('/v1/guardrails/org-guard', {
      checks: [
        { ...regex, is_enabled: false },
        { id: 'default.contains', parameters: { operator: 'none', words: ['y'] } },
      ],
    });
    const second = await lookup.forRequest({ organisationId, workspaceId: a.id });
    expect(second.before[0]).toMatchObject({
      version: 2,
      checks: [{ id: 'default.contains', check: 'default.contains' }],
    });

    // A change made elsewhere (another instance) is seen once the cache entry expires.
    await t.server.db.updateTable('guardrails').set({ status: 'archived' }).where('slug', '=', 'org-guard').execute();
    expect((await lookup.forRequest({ organisationId, workspaceId: a.id })).before).toHaveLength(1);
    clock.advance(31_000);
    const later = await lookup.forRequest({ organisationId, workspaceId: a.id });
    expect(later.before).toHaveLength(0);
    expect(later.missing).toEqual([{ ref: 'org-guard', source: 'workspace_defaults.input_guardrails[0]' }]);

    // Clearing the workspace defaults is seen at once too.
    await admin.put('/v1/workspaces/team-a', { defaults: null });
    expect((await lookup.forRequest({ organisationId, workspaceId: a.id })).missing).toEqual([]);
  });
});
