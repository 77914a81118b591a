import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WORKSPACE_SCOPES } from '../../src/auth/scopes.js';
import { AGENT_SKILLS, startA2aAgent } from '../helpers/a2a-agent.js';
import { createAgentIntegration, createAgentServer, message03, rpc } from '../helpers/agents.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';
import { expectRefused } from '../helpers/tenant-pair.js';

const TOKEN = 'peer-secret';

/** The server, the A2A peer (which wants Bearer peer-secret), and two workspaces with a key each. */
async function setup() {
  const agent = await startA2aAgent({ token: TOKEN });
  const t = await startTestServer();
  const admin = apiClient(t.baseUrl, t.adminKey);
  const orgId = t.server.bootstrap.organisationId;
  const team = async (slug: string) => {
    const workspace = await createWorkspace(admin, slug, slug);
    const userId = await addUser(t.server.db, orgId, 'member', [{ workspaceId: workspace.id, role: 'admin' }]);
    const key = await createWorkspaceKey(admin, { workspace_id: slug, scopes: [...WORKSPACE_SCOPES], user_id: userId });
    return { ...workspace, userId, client: apiClient(t.baseUrl, key.key) };
  };
  return { agent, t, admin, orgId, a: await team('team-a'), b: await team('team-b') };
}

/** Every answer a client got, to check that no credential ever came back. */
function recording(client: ApiClient): ApiClient & { bodies: string[] } {
  const bodies: string[] = [];
  const wrap =
    <A extends unknown[]>(fn: (...args: A) => Promise<any>) =>
    async (...args: A) => {
      const res = await fn(...args);
      bodies.push(JSON.stringify(res.body));
      return res;
    };
  return {
    ...client,
    get: wrap(client.get),
    post: wrap(client.post),
    put: wrap(client.put),
    delete: wrap(client.delete),
    bodies,
  };
}

describe('agent integrations', () => {
  it('create reads the card and its skills; get, list, update, sync and archive; credentials never come back', async () => {
    const { agent, t } = await setup();
    const admin = recording(apiClient(t.baseUrl, t.adminKey));
    const created = await admin.post('/v1/agent-integrations', {
      name: 'Echo agent',
      slug: 'echo-agent',
      description: 'Answers with what it hears',
      url: agent.url,
      auth_type: 'bearer',
      configurations: { bearer_token: TOKEN },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      slug: 'echo-agent',
      sync_status: 'ok',
      sync_error: null,
      object: 'agent_integration',
    });
    const id = created.body.id as string;

    const got = await admin.get('/v1/agent-integrations/echo-agent');
    expect(got.body).toMatchObject({
      id,
      type: 'organisation',
      workspace_id: null,
      url: agent.url,
      rpc_url: null,
      auth_type: 'bearer',
      configurations: { bearer_token: '[REDACTED]' },
      global_workspace_access: false,
      status: 'active',
      sync_status: 'ok',
      servers_count: 0,
    });
    const metadata = await admin.get(`/v1/agent-integrations/${id}/metadata`);
    expect(metadata.body).toMatchObject({
      agent_name: 'Echo agent',
      agent_version: '1.4.0',
      protocol_version: '1.0',
      rpc_url: agent.rpcUrl,
      card_url: `${agent.url}/.well-known/agent-card.json`,
      capability_flags: { streaming: true, push_notifications: false, extended_agent_card: false },
      skills_count: 3,
      sync_status: 'ok',
      sync_error: null,
    });
    const skills = await admin.get(`/v1/agent-integrations/${id}/skills`);
    expect(skills.body.counts).toEqual({ total: 3, enabled: 3 });
    expect(skills.body.data.map((s: any) => s.id)).toEqual(AGENT_SKILLS.map((s) => s.id));
    expect(skills.body.data[0]).toMatchObject({
      name: 'Echo',
      description: 'Says back what it was told.',
      tags: ['text'],
      enabled: true,
    });

    const off = await admin.put(`/v1/agent-integrations/${id}/skills`, { skills: [{ id: 'whisper', enabled: false }] });
    expect(off.body).toEqual({ success: true });
    expectRefused(
      await admin.put(`/v1/agent-integrations/${id}/skills`, { skills: [{ id: 'sing', enabled: true }] }),
      400,
      'INVALID_REQUEST',
      'skills[0].id',
    );

    // [REDACTED] sent back keeps the stored token: the card is read again with it.
    const renamed = await admin.put(`/v1/agent-integrations/${id}`, {
      name: 'Echo',
      configurations: { bearer_token: '[REDACTED]' },
    });
    expect(renamed.status).toBe(200);
    expect((await admin.get(`/v1/agent-integrations/${id}/metadata`)).body.sync_status).toBe('ok');
    // A wrong token: the agent refuses the card; the last good card (and its endpoint) stays.
    await admin.put(`/v1/agent-integrations/${id}`, { configurations: { bearer_token: 'wrong' } });
    const refused = (await admin.get(`/v1/agent-integrations/${id}/metadata`)).body;
    expect(refused).toMatchObject({ sync_status: 'error', rpc_url: agent.rpcUrl, skills_count: 3 });
    expect(refused.sync_error).toContain('401');
    await admin.put(`/v1/agent-integrations/${id}`, { configurations: { bearer_token: TOKEN } });
    const synced = await admin.post(`/v1/agent-integrations/${id}/sync`);
    expect(synced.body).toMatchObject({ sync_status: 'ok', skills_count: 3 });
    // A sync keeps the switches of skills the card still has.
    const after = (await admin.get(`/v1/agent-integrations/${id}/skills`)).body;
    expect(after.data.find((s: any) => s.id === 'whisper').enabled).toBe(false);

    const listed = await admin.get('/v1/agent-integrations?search=ECHO');
    expect(listed.body).toMatchObject({ object: 'list', total: 1 });
    expect(listed.body.data[0]).toMatchObject({ id, name: 'Echo' });
    expect((await admin.get('/v1/agent-integrations?type=workspace')).body.total).toBe(0);

    expect((await admin.delete(`/v1/agent-integrations/${id}`)).status).toBe(200);
    expect((await admin.get(`/v1/agent-integrations/${id}`)).body.status).toBe('archived');
    expect((await admin.get('/v1/agent-integrations')).body.total).toBe(0);
    expect((await admin.get('/v1/agent-integrations?status=archived')).body.total).toBe(1);
    // The slug is free again.
    const again = await admin.post('/v1/agent-integrations', {
      name: 'Again',
      slug: 'echo-agent',
      url: agent.url,
      auth_type: 'none',
    });
    expect(again.status).toBe(200);
    expect(again.body.sync_status).toBe('error'); // no token: the agent answers 401

    for (const body of admin.bodies) expect(body).not.toContain(TOKEN);
    // Audited, every change, with the token redacted.
    const audit = await admin.get('/v1/audit-logs?resource_type=agent_integration&page_size=100');
    const actions = audit.body.data.map((r: any) => r.action);
    for (const action of ['create', 'update', 'update_skills', 'sync', 'delete']) expect(actions).toContain(action);
    expect(JSON.stringify(audit.body)).not.toContain(TOKEN);
    expect(
      audit.body.data.find((r: any) => r.action === 'create' && r.resource_id === id).request_body.configurations,
    ).toEqual({
      bearer_token: '[REDACTED]',
    });
    // And stored encrypted: the token is nowhere in the database in clear.
    const stored = await t.server.db.selectFrom('agent_integrations').select('encrypted_auth').execute();
    for (const row of stored) expect(row.encrypted_auth ?? '').not.toContain(TOKEN);
  });

  it('refuses bad input with the field named', async () => {
    const { agent, admin } = await setup();
    const base = { name: 'A', url: agent.url };
    const cases: Array<[Record<string, unknown>, number, string, string | null]> = [
      [{ name: 'A' }, 400, 'INVALID_REQUEST', 'url'],
      [{ ...base, url: 'ftp://example.test/agent' }, 400, 'INVALID_REQUEST', 'url'],
      [{ ...base, url: `http://user:pw@127.0.0.1:1/` }, 400, 'INVALID_REQUEST', 'url'],
      [{ ...base, auth_type: 'bearer' }, 400, 'INVALID_REQUEST', 'configurations.bearer_token'],
      [
        { ...base, auth_type: 'headers', configurations: { custom_headers: {} } },
        400,
        'INVALID_REQUEST',
        'configurations.custom_headers',
      ],
      [
        { ...base, auth_type: 'headers', configurations: { custom_headers: { Host: 'x' } } },
        400,
        'INVALID_REQUEST',
        null,
      ],
      [
        { ...base, auth_type: 'headers', configurations: { custom_headers: { 'X-Key': 'a\r\nb' } } },
        400,
        'INVALID_REQUEST',
        null,
      ],
      [{ ...base, configurations: { bearer_token: 'x' } }, 400, 'INVALID_REQUEST', 'auth_type'],
      [{ ...base, auth_type: 'oauth' }, 400, 'INVALID_REQUEST', 'auth_type'],
      [{ ...base, slug: '0e8d6e1c-7f26-4a3b-9d3a-1b2c3d4e5f60' }, 400, 'INVALID_REQUEST', 'slug'],
      [{ ...base, colour: 'red' }, 400, 'INVALID_REQUEST', null],
      [{ ...base, workspace_id: 'nope' }, 404, 'NOT_FOUND', 'workspace_id'],
      [
        { ...base, workspace_id: 'team-a', global_workspace_access: true },
        400,
        'INVALID_REQUEST',
        'global_workspace_access',
      ],
    ];
    for (const [body, status, code, param] of cases) {
      const res = await admin.post('/v1/agent-integrations', body);
      expectRefused(res, status, code, param === null ? undefined : param);
    }
    await createAgentIntegration(admin, agent.url, { slug: 'taken' });
    expectRefused(await admin.post('/v1/agent-integrations', { ...base, slug: 'taken' }), 409, 'CONFLICT', 'slug');
    expectRefused(await admin.put('/v1/agent-integrations/taken', {}), 400, 'INVALID_REQUEST');
    expectRefused(await admin.get('/v1/agent-integrations/no-such'), 404, 'NOT_FOUND');
    expectRefused(await admin.get('/v1/agent-integrations/0e8d6e1c-7f26-4a3b-9d3a-1b2c3d4e5f60'), 404, 'NOT_FOUND');
    expectRefused(await admin.get('/v1/agent-integrations?page_size=0'), 400, 'INVALID_REQUEST', 'page_size');
  });

  it('an agent that cannot be reached, or whose card names another origin, is kept with the sync in error', async () => {
    const { agent, admin, t } = await setup();
    const closed = await startA2aAgent();
    await closed.close();
    const down = await createAgentIntegration(admin, closed.url, { auth_type: 'none', configurations: undefined });
    expect(down.sync_status).toBe('error');
    const metadata = (await admin.get(`/v1/agent-integrations/${down.id}/metadata`)).body;
    expect(metadata.sync_error).toContain('could not be reached');
    await createAgentServer(admin, { agent_integration_id: down.id, workspace_id: 'default', slug: 'down' });
    const call = await fetch(`${t.baseUrl}/v1/agents/down`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-api-key': t.adminKey },
      body: JSON.stringify(rpc('message/send', message03('hi'))),
    });
    expect(call.status).toBe(502);
    expect(((await call.json()) as any).error.code).toBe('AGENT_UNAVAILABLE');

    // Reached as localhost, the card names 127.0.0.1: credentials go to the integration's origin only.
    const proxied = await createAgentIntegration(admin, agent.url.replace('127.0.0.1', 'localhost'));
    expect(proxied.sync_status).toBe('error');
    const error = (await admin.get(`/v1/agent-integrations/${proxied.id}/metadata`)).body;
    expect(error).toMatchObject({ rpc_url: null, skills_count: 3 });
    expect(error.sync_error).toContain('rpc_url');
    expect((await admin.put(`/v1/agent-integrations/${proxied.id}`, { rpc_url: agent.rpcUrl })).status).toBe(200);
    expect((await admin.get(`/v1/agent-integrations/${proxied.id}/metadata`)).body).toMatchObject({
      sync_status: 'ok',
      rpc_url: agent.rpcUrl,
    });
  });

  it('workspace access: organisation integrations are enabled per workspace; workspace integrations stay in theirs', async () => {
    const { agent, admin, a, b } = await setup();
    const org = await createAgentIntegration(admin, agent.url, { slug: 'org-agent', global_workspace_access: false });
    // Not enabled anywhere: workspace keys do not see it.
    expectRefused(await a.client.get('/v1/agent-integrations/org-agent'), 404, 'NOT_FOUND');
    expect((await a.client.get('/v1/agent-integrations')).body.total).toBe(0);
    const enable = await admin.put('/v1/agent-integrations/org-agent/workspaces', {
      workspaces: [{ id: 'team-a', enabled: true }],
    });
    expect(enable.status).toBe(200);
    const access = (await admin.get('/v1/agent-integrations/org-agent/workspaces')).body;
    expect(access.global_workspace_access).toEqual({ enabled: false });
    expect(access.data.find((w: any) => w.slug === 'team-a')).toMatchObject({ enabled: true, has_override: true });
    expect(access.data.find((w: any) => w.slug === 'team-b')).toMatchObject({ enabled: false, has_override: false });
    expect((await a.client.get('/v1/agent-integrations/org-agent')).body.id).toBe(org.id);
    expectRefused(await b.client.get(`/v1/agent-integrations/${org.id}`), 404, 'NOT_FOUND');
    // Workspace keys use organisation integrations but do not change them, nor their access.
    expectRefused(await a.client.put('/v1/agent-integrations/org-agent', { name: 'x' }), 403, 'WORKSPACE_FORBIDDEN');
    expectRefused(await a.client.post('/v1/agent-integrations/org-agent/sync'), 403, 'WORKSPACE_FORBIDDEN');
    expectRefused(await a.client.get('/v1/agent-integrations/org-agent/workspaces'), 403, 'KEY_TYPE_NOT_ALLOWED');
    expectRefused(
      await admin.put('/v1/agent-integrations/org-agent/workspaces', { workspaces: [{ id: 'nope', enabled: true }] }),
      404,
      'NOT_FOUND',
      'workspaces[0].id',
    );
    // Global access with override: every workspace, team-a's switch cleared.
    await admin.put('/v1/agent-integrations/org-agent/workspaces', {
      workspaces: [],
      global_workspace_access: { enabled: true },
      override_existing_workspace_access: true,
    });
    expect((await b.client.get('/v1/agent-integrations/org-agent')).status).toBe(200);

    // A workspace key makes an integration of its own workspace; another workspace cannot see it.
    const own = await a.client.post('/v1/agent-integrations', {
      name: 'Team A agent',
      slug: 'team-a-agent',
      url: agent.url,
      auth_type: 'headers',
      configurations: { custom_headers: { Authorization: `Bearer ${TOKEN}` } },
    });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.sync_status).toBe('ok');
    const ownObject = (await a.client.get('/v1/agent-integrations/team-a-agent')).body;
    expect(ownObject).toMatchObject({
      type: 'workspace',
      workspace_id: a.id,
      configurations: { custom_headers: { Authorization: '[REDACTED]' } },
    });
    expectRefused(await b.client.get('/v1/agent-integrations/team-a-agent'), 404, 'NOT_FOUND');
    expectRefused(await b.client.put(`/v1/agent-integrations/${own.body.id}`, { name: 'x' }), 404, 'NOT_FOUND');
    expectRefused(await b.client.delete(`/v1/agent-integrations/${own.body.id}`), 404, 'NOT_FOUND');
    expectRefused(await admin.get('/v1/agent-integrations/team-a-agent/workspaces'), 400, 'INVALID_REQUEST', 'id');
    expect((await b.client.get('/v1/agent-integrations')).body.data.map((i: any) => i.slug)).toEqual(['org-agent']);
    expect((await a.client.get('/v1/agent-integrations')).body.total).toBe(2);
  });
});

describe('agent servers', () => {
  it('CRUD, test, skills and user access, inside the tenant walls', async () => {
    const { agent, admin, a, b, t } = await setup();
    const integration = await createAgentIntegration(admin, agent.url, {
      slug: 'echo-agent',
      global_workspace_access: false,
    });
    await admin.put('/v1/agent-integrations/echo-agent/workspaces', { workspaces: [{ id: 'team-a', enabled: true }] });

    // Workspace keys make servers in their own workspace; an integration not enabled there is refused.
    const server = await createAgentServer(a.client, {
      agent_integration_id: 'echo-agent',
      slug: 'team-a-echo',
      description: 'Ours',
    });
    expect(server).toMatchObject({
      slug: 'team-a-echo',
      workspace_id: a.id,
      workspace_slug: 'team-a',
      agent_integration_id: integration.id,
      agent_integration_slug: 'echo-agent',
      default_user_access: 'allow',
      status: 'active',
      url: `${t.baseUrl}/v1/agents/team-a-echo`,
      object: 'agent_server',
    });
    expectRefused(
      await b.client.post('/v1/agent-servers', { name: 'x', agent_integration_id: 'echo-agent' }),
      404,
      'NOT_FOUND',
      'agent_integration_id',
    );
    expectRefused(
      await admin.post('/v1/agent-servers', { name: 'x', agent_integration_id: 'echo-agent', workspace_id: 'team-b' }),
      400,
      'INVALID_REQUEST',
      'agent_integration_id',
    );
    expectRefused(
      await admin.post('/v1/agent-servers', { name: 'x', agent_integration_id: 'echo-agent' }),
      400,
      'INVALID_REQUEST',
      'workspace_id',
    );
    expectRefused(
      await a.client.post('/v1/agent-servers', { name: 'x', agent_integration_id: 'echo-agent', slug: 'team-a-echo' }),
      409,
      'CONFLICT',
      'slug',
    );
    expectRefused(
      await a.client.post('/v1/agent-servers', { name: 'x', agent_integration_id: 'echo-agent', slug: 'A B' }),
      400,
      'INVALID_REQUEST',
      'slug',
    );

    expect((await a.client.get('/v1/agent-servers')).body.data.map((s: any) => s.id)).toEqual([server.id]);
    expect((await b.client.get('/v1/agent-servers')).body.total).toBe(0);
    expect((await admin.get('/v1/agent-servers?workspace_id=team-a')).body.total).toBe(1);
    expect((await admin.get('/v1/agent-servers?agent_integration_id=echo-agent')).body.total).toBe(1);
    expect((await a.client.get('/v1/agent-servers/team-a-echo')).body.description).toBe('Ours');
    expect((await a.client.put(`/v1/agent-servers/${server.id}`, { name: 'Echo A', description: null })).status).toBe(
      200,
    );
    expect((await a.client.get(`/v1/agent-servers/${server.id}`)).body).toMatchObject({
      name: 'Echo A',
      description: null,
    });
    expectRefused(await a.client.put(`/v1/agent-servers/${server.id}`, { slug: 'other' }), 400, 'INVALID_REQUEST');
    expect((await admin.get('/v1/agent-integrations/echo-agent')).body.servers_count).toBe(1);

    // Another workspace's server is not found, whatever the operation.
    for (const res of [
      await b.client.get(`/v1/agent-servers/${server.id}`),
      await b.client.get('/v1/agent-servers/team-a-echo'),
      await b.client.put(`/v1/agent-servers/${server.id}`, { name: 'x' }),
      await b.client.delete(`/v1/agent-servers/${server.id}`),
      await b.client.post(`/v1/agent-servers/${server.id}/test`),
      await b.client.get(`/v1/agent-servers/${server.id}/skills`),
      await b.client.put(`/v1/agent-servers/${server.id}/skills`, { skills: [{ id: 'echo', enabled: false }] }),
      await b.client.get(`/v1/agent-servers/${server.id}/user-access`),
      await b.client.put(`/v1/agent-servers/${server.id}/user-access`, { default_user_access: 'deny' }),
    ])
      expectRefused(res, 404, 'NOT_FOUND');

    const test = await a.client.post(`/v1/agent-servers/${server.id}/test`);
    expect(test.body).toMatchObject({
      success: true,
      status_code: 200,
      url: `${agent.url}/.well-known/agent-card.json`,
      agent_name: 'Echo agent',
      skills_count: 3,
      error: null,
    });
    expect(test.body.response_time_ms).toBeGreaterThanOrEqual(0);

    await admin.put('/v1/agent-integrations/echo-agent/skills', { skills: [{ id: 'shout', enabled: false }] });
    await a.client.put(`/v1/agent-servers/${server.id}/skills`, { skills: [{ id: 'whisper', enabled: false }] });
    const skills = (await a.client.get(`/v1/agent-servers/${server.id}/skills`)).body;
    expect(skills.counts).toEqual({ total: 3, enabled: 1 });
    expect(skills.data.map((s: any) => [s.id, s.enabled, s.integration_enabled])).toEqual([
      ['echo', true, true],
      ['shout', true, false],
      ['whisper', false, true],
    ]);
    expectRefused(
      await a.client.put(`/v1/agent-servers/${server.id}/skills`, { skills: [{ id: 'sing', enabled: false }] }),
      400,
      'INVALID_REQUEST',
      'skills[0].id',
    );

    // User access: the workspace's members, with the default, then an override.
    const access = (await a.client.get(`/v1/agent-servers/${server.id}/user-access`)).body;
    expect(access).toMatchObject({ object: 'list', default_user_access: 'allow' });
    expect(access.data.find((u: any) => u.user_id === a.userId)).toMatchObject({ enabled: true, has_override: false });
    expect(access.data.some((u: any) => u.user_id === b.userId)).toBe(false);
    await a.client.put(`/v1/agent-servers/${server.id}/user-access`, {
      default_user_access: 'deny',
      user_access: [{ user_id: b.userId, enabled: true }],
    });
    const changed = (await a.client.get(`/v1/agent-servers/${server.id}/user-access`)).body;
    expect(changed.default_user_access).toBe('deny');
    expect(changed.data.find((u: any) => u.user_id === a.userId)).toMatchObject({
      enabled: false,
      has_override: false,
    });
    expect(changed.data.find((u: any) => u.user_id === b.userId)).toMatchObject({ enabled: true, has_override: true });
    await a.client.put(`/v1/agent-servers/${server.id}/user-access`, {
      user_access: [{ user_id: b.userId, enabled: null }],
    });
    expect((await a.client.get(`/v1/agent-servers/${server.id}/user-access`)).body.total).toBe(changed.total - 1);
    const stranger = randomUUID();
    expectRefused(
      await a.client.put(`/v1/agent-servers/${server.id}/user-access`, {
        user_access: [{ user_id: stranger, enabled: true }],
      }),
      404,
      'NOT_FOUND',
      'user_access[0].user_id',
    );
    expectRefused(await a.client.put(`/v1/agent-servers/${server.id}/user-access`, {}), 400, 'INVALID_REQUEST');

    // A test against an agent that answers 401 (wrong token) says so.
    await admin.put('/v1/agent-integrations/echo-agent', { configurations: { bearer_token: 'wrong' } });
    const failing = (await a.client.post(`/v1/agent-servers/${server.id}/test`)).body;
    expect(failing).toMatchObject({ success: false, status_code: 401, agent_name: null });
    expect(failing.error).toContain('401');

    expect((await a.client.delete(`/v1/agent-servers/${server.id}`)).status).toBe(200);
    expect((await a.client.get(`/v1/agent-servers/${server.id}`)).body.status).toBe('archived');
    expect((await a.client.get('/v1/agent-servers')).body.total).toBe(0);
    expectRefused(await a.client.put(`/v1/agent-servers/${server.id}`, { name: 'x' }), 400, 'INVALID_REQUEST', 'id');

    const audit = (await admin.get('/v1/audit-logs?resource_type=agent_server&page_size=100')).body.data;
    const actions = audit.filter((r: any) => r.response_status_code === 200).map((r: any) => r.action);
    for (const action of ['create', 'update', 'test', 'update_skills', 'update_user_access', 'delete'])
      expect(actions).toContain(action);
    expect(audit.find((r: any) => r.action === 'create' && r.response_status_code === 200).workspace_id).toBe(a.id);
  });
});
