import { describe, expect, it } from 'vitest';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startMcpUpstream } from '../helpers/mcp-upstream.js';
import { startTestServer } from '../helpers/start-test-server.js';

const MCP_SCOPES = [
  'mcp.invoke',
  ...['create', 'read', 'list', 'update', 'delete'].flatMap((verb) => [
    `mcp_integrations.${verb}`,
    `mcp_servers.${verb}`,
  ]),
];

describe('MCP integrations (control plane)', () => {
  it('creates, lists, reads, updates and archives integrations at the reference paths, secrets sealed and masked', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const upstream = await startMcpUpstream({
      authorize: (headers) => headers['x-api-key'] === 'upstream-key-0123456789',
    });

    const created = await admin.post('/v1/mcp-integrations', {
      name: 'Docs tools',
      slug: 'docs-tools',
      description: 'Search the docs',
      url: upstream.url,
      transport: 'http',
      auth_type: 'headers',
      configurations: { custom_headers: { 'X-Api-Key': 'upstream-key-0123456789' } },
      secret_mappings: [],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({ id: expect.any(String), slug: 'docs-tools', object: 'mcp-integration' });
    const id = created.body.id as string;
    await t.server.mcp.sync.sync(id);

    const one = await admin.get(`/v1/mcp-integrations/${id}`);
    expect(one.body).toMatchObject({
      id,
      organisation_id: t.server.bootstrap.organisationId,
      name: 'Docs tools',
      slug: 'docs-tools',
      description: 'Search the docs',
      status: 'active',
      type: 'organisation',
      workspace_id: null,
      url: upstream.url,
      transport: 'http',
      auth_type: 'headers',
      configurations: { custom_headers: { 'X-Api-Key': '****' } },
      secret_mappings: [],
      workspaces_count: 0,
      global_workspace_access: { enabled: false },
      sync_status: 'synced',
      object: 'mcp-integration',
    });
    expect(one.body.owner_id).toEqual(expect.any(String));
    // At rest the header is sealed; nowhere is it shown.
    const row = await t.server.db
      .selectFrom('mcp_integrations')
      .select('configurations')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.configurations).not.toContain('upstream-key-0123456789');
    expect((await admin.get(`/v1/mcp-integrations/docs-tools`)).body.id).toBe(id);

    const list = await admin.get('/v1/mcp-integrations?type=organisation&search=DOCS');
    expect(list.body).toMatchObject({ object: 'list', total: 1, has_more: false });
    expect(list.body.data[0]).toMatchObject({ id, slug: 'docs-tools', workspaces_count: 0 });
    expect((await admin.get('/v1/mcp-integrations?type=workspace')).body.total).toBe(0);

    // Sending the masked configurations back keeps the stored header: the server still lets svcgw in.
    expect(
      (await admin.put(`/v1/mcp-integrations/${id}`, { name: 'Docs', configurations: one.body.configurations })).body,
    ).toEqual({});
    expect((await t.server.mcp.sync.sync(id)).ok).toBe(true);
    expect(upstream.received.at(-1)?.headers['x-api-key']).toBe('upstream-key-0123456789');

    const audit = await admin.get('/v1/audit-logs?resource_type=mcp_integration');
    expect(audit.body.data.map((r: any) => r.action).sort()).toEqual(['create', 'update']);
    expect(JSON.stringify(audit.body)).not.toContain('upstream-key-0123456789');

    expect((await admin.delete(`/v1/mcp-integrations/${id}`)).body).toEqual({});
    expect((await admin.get(`/v1/mcp-integrations/${id}`)).body.status).toBe('archived');
    expect((await admin.get('/v1/mcp-integrations')).body.total).toBe(0);
    expect((await admin.get('/v1/mcp-integrations?status=archived')).body.total).toBe(1);
    // The slug is free again.
    expect(
      (
        await admin.post('/v1/mcp-integrations', {
          name: 'again',
          slug: 'docs-tools',
          url: upstream.url,
          transport: 'sse',
          auth_type: 'none',
        })
      ).status,
    ).toBe(200);
  });

  it('refuses bad input with the parameter named', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const base = { name: 'x', url: 'http://127.0.0.1:9/mcp', transport: 'http', auth_type: 'none' };
    const refused = async (body: Record<string, unknown>, status: number, param: string) => {
      const res = await admin.post('/v1/mcp-integrations', { ...base, ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error.param).toBe(param);
      return res.body.error;
    };
    await refused({ url: 'ftp://example.com/mcp' }, 400, 'url');
    await refused({ url: 'https://user:pw@example.com/mcp' }, 400, 'url');
    await refused({ transport: 'interactive' }, 400, 'transport');
    await refused({ auth_type: 'headers' }, 400, 'configurations.custom_headers');
    await refused(
      { auth_type: 'oauth_client_credentials', configurations: { client_id: 'a', client_secret: 'b' } },
      400,
      'configurations.token_url',
    );
    await refused({ configurations: { client_id: 'a' } }, 400, 'configurations.client_id');
    await refused(
      { auth_type: 'headers', configurations: { custom_headers: { 'Mcp-Session-Id': 'x' } } },
      400,
      'configurations.custom_headers.Mcp-Session-Id',
    );
    // Mappings name secret references that exist, and fields of the auth configuration only.
    const mapping = await refused(
      { secret_mappings: [{ target_field: 'configurations.client_secret', secret_reference_id: 'vault' }] },
      404,
      'secret_mappings[0].secret_reference_id',
    );
    expect(mapping.message).toMatch(/Secret reference vault not found/);
    await refused(
      { secret_mappings: [{ target_field: 'configurations.token_url', secret_reference_id: 'vault' }] },
      400,
      'secret_mappings[0].target_field',
    );
    const unknownField = await admin.post('/v1/mcp-integrations', { ...base, colour: 'blue' });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.message).toMatch(/colour/);
    await refused({ organisation_id: '00000000-0000-4000-8000-000000000000' }, 404, 'organisation_id');
    expect((await admin.post('/v1/mcp-integrations', { ...base, slug: 'taken' })).status).toBe(200);
    await refused({ slug: 'taken' }, 409, 'slug');
    expect((await admin.get('/v1/mcp-integrations/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await admin.get('/v1/mcp-integrations/nope/capabilities?page=1&current_page=0')).status).toBe(404);
    const both = await admin.get('/v1/mcp-integrations/taken/capabilities?page=1&current_page=0');
    expect(both.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'page' });
  });

  it('shares organisation integrations with workspaces; workspace keys see only theirs and cannot change them', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const a = await createWorkspace(admin, 'Team A', 'team-a');
    await createWorkspace(admin, 'Team B', 'team-b');
    const keyA = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: MCP_SCOPES })).key,
    );
    const keyB = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-b', scopes: MCP_SCOPES })).key,
    );
    const base = { url: 'http://127.0.0.1:9/mcp', transport: 'http', auth_type: 'none' };
    const org = (await admin.post('/v1/mcp-integrations', { ...base, name: 'Shared', slug: 'shared' })).body.id;

    expect((await keyA.get('/v1/mcp-integrations')).body.total).toBe(0);
    expect((await keyA.get(`/v1/mcp-integrations/${org}`)).status).toBe(404);
    expect(
      (await admin.put(`/v1/mcp-integrations/${org}/workspaces`, { workspaces: [{ id: 'team-a', enabled: true }] }))
        .body,
    ).toEqual({});
    const access = await admin.get(`/v1/mcp-integrations/${org}/workspaces`);
    expect(access.body.global_workspace_access).toEqual({ enabled: false });
    expect(access.body.data.find((w: any) => w.id === a.id)).toMatchObject({
      slug: 'team-a',
      enabled: true,
      has_override: true,
    });
    expect(access.body.data.find((w: any) => w.slug === 'team-b')).toMatchObject({
      enabled: false,
      has_override: false,
    });
    expect((await admin.get(`/v1/mcp-integrations/${org}`)).body.workspaces_count).toBe(1);

    expect((await keyA.get('/v1/mcp-integrations')).body.data.map((i: any) => i.slug)).toEqual(['shared']);
    expect((await keyB.get(`/v1/mcp-integrations/${org}`)).status).toBe(404);
    const change = await keyA.put(`/v1/mcp-integrations/${org}`, { name: 'mine now' });
    expect(change.body.error.code).toBe('WORKSPACE_FORBIDDEN');
    expect((await keyA.get(`/v1/mcp-integrations/${org}/workspaces`)).body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');

    // Global access for all, with one workspace switched off; override drops earlier switches.
    await admin.put(`/v1/mcp-integrations/${org}/workspaces`, {
      workspaces: [{ id: 'team-a', enabled: false }],
      global_workspace_access: { enabled: true },
    });
    expect((await keyA.get(`/v1/mcp-integrations/${org}`)).status).toBe(404);
    expect((await keyB.get(`/v1/mcp-integrations/${org}`)).status).toBe(200);
    await admin.put(`/v1/mcp-integrations/${org}/workspaces`, {
      workspaces: [],
      override_existing_workspace_access: true,
    });
    expect((await keyA.get(`/v1/mcp-integrations/${org}`)).status).toBe(200);
    const unknown = await admin.put(`/v1/mcp-integrations/${org}/workspaces`, {
      workspaces: [{ id: 'nope', enabled: true }],
    });
    expect(unknown.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'workspaces[0].id' });

    // A workspace key makes a workspace integration: its own workspace's alone.
    const own = await keyA.post('/v1/mcp-integrations', { ...base, name: 'A only', slug: 'a-only' });
    expect(own.status).toBe(200);
    expect((await admin.get('/v1/mcp-integrations/a-only')).body).toMatchObject({
      type: 'workspace',
      workspace_id: a.id,
      workspaces_count: 1,
    });
    expect((await keyB.get('/v1/mcp-integrations/a-only')).status).toBe(404);
    expect((await keyB.delete('/v1/mcp-integrations/a-only')).status).toBe(404);
    const shareOwn = await admin.put('/v1/mcp-integrations/a-only/workspaces', {
      workspaces: [{ id: 'team-b', enabled: true }],
    });
    expect(shareOwn.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'workspaces' });
    const elsewhere = await keyA.post('/v1/mcp-integrations', { ...base, name: 'x', workspace_id: 'team-b' });
    expect(elsewhere.body.error.code).toBe('WORKSPACE_FORBIDDEN');
  });

  it('lists capabilities with counts and pages, switches them, and shows the metadata', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const upstream = await startMcpUpstream();
    const id = (
      await admin.post('/v1/mcp-integrations', {
        name: 'caps',
        url: upstream.url,
        transport: 'http',
        auth_type: 'none',
      })
    ).body.id;
    await t.server.mcp.sync.sync(id);

    const all = await admin.get(`/v1/mcp-integrations/${id}/capabilities`);
    expect(all.body.counts).toEqual({
      tools: { total: 5, enabled: 5 },
      prompts: { total: 2, enabled: 2 },
      resources: { total: 1, enabled: 1 },
      resource_templates: { total: 1, enabled: 1 },
    });
    expect(all.body).toMatchObject({ object: 'list', total: 9, has_more: false });
    const echo = all.body.data.find((c: any) => c.name === 'echo');
    expect(echo).toMatchObject({ type: 'tool', title: 'Echo', description: 'Repeats the text', enabled: true });
    expect(echo.definition.inputSchema.properties.text).toEqual({ type: 'string' });

    const page1 = await admin.get(`/v1/mcp-integrations/${id}/capabilities?type=tool&page=1&page_size=3`);
    const page2 = await admin.get(`/v1/mcp-integrations/${id}/capabilities?type=tool&page=2&page_size=3`);
    expect(page1.body).toMatchObject({ total: 5, has_more: true });
    expect([...page1.body.data, ...page2.body.data].map((c: any) => c.name)).toEqual([
      'add',
      'count',
      'echo',
      'fail',
      'shout',
    ]);
    expect(page2.body.has_more).toBe(false);
    expect(
      (await admin.get(`/v1/mcp-integrations/${id}/capabilities?type=tool&current_page=1&page_size=3`)).body.data,
    ).toEqual(page2.body.data);

    expect(
      (
        await admin.put(`/v1/mcp-integrations/${id}/capabilities`, {
          capabilities: [
            { name: 'fail', type: 'tool', enabled: false },
            { name: 'docs://readme', type: 'resource', enabled: false },
          ],
        })
      ).body,
    ).toEqual({ success: true });
    const after = await admin.get(`/v1/mcp-integrations/${id}/capabilities`);
    expect(after.body.counts.tools).toEqual({ total: 5, enabled: 4 });
    expect(after.body.counts.resources).toEqual({ total: 1, enabled: 0 });
    const missing = await admin.put(`/v1/mcp-integrations/${id}/capabilities`, {
      capabilities: [{ name: 'nope', type: 'tool', enabled: false }],
    });
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'capabilities[0].name' });

    expect((await admin.get(`/v1/mcp-integrations/${id}/metadata`)).body).toEqual({
      server_name: 'test-upstream',
      server_version: '1.0.0',
      server_title: 'Test upstream',
      server_description: null,
      icons: null,
      website_url: null,
      protocol_version: expect.any(String),
      capability_flags: expect.objectContaining({ tools: expect.any(Object) }),
      instructions: 'Use echo to repeat things.',
      sync_status: 'synced',
      last_synced_at: expect.any(String),
      sync_error: null,
    });
  });
});

describe('MCP servers (control plane)', () => {
  it('creates, lists, reads, updates, tests and archives servers; user access and connections', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const orgId = t.server.bootstrap.organisationId;
    const upstream = await startMcpUpstream();
    const a = await createWorkspace(admin, 'Team A', 'team-a');
    await createWorkspace(admin, 'Team B', 'team-b');
    const keyA = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: MCP_SCOPES })).key,
    );
    const keyB = apiClient(
      t.baseUrl,
      (await createWorkspaceKey(admin, { workspace_id: 'team-b', scopes: MCP_SCOPES })).key,
    );
    const integration = (
      await admin.post('/v1/mcp-integrations', {
        name: 'up',
        slug: 'up',
        url: upstream.url,
        transport: 'http',
        auth_type: 'none',
      })
    ).body.id;

    // Not shared with team-a yet: an admin is told why, team-a's key does not see it.
    const unshared = await admin.post('/v1/mcp-servers', {
      name: 'x',
      mcp_integration_id: 'up',
      workspace_id: 'team-a',
    });
    expect(unshared.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'mcp_integration_id' });
    expect((await keyA.post('/v1/mcp-servers', { name: 'x', mcp_integration_id: 'up' })).body.error).toMatchObject({
      code: 'NOT_FOUND',
      param: 'mcp_integration_id',
    });
    await admin.put(`/v1/mcp-integrations/${integration}/workspaces`, {
      workspaces: [{ id: 'team-a', enabled: true }],
    });

    const short = await keyA.post('/v1/mcp-servers', { name: 'x', slug: 'ab', mcp_integration_id: 'up' });
    expect(short.body.error.param).toBe('slug');
    const created = await keyA.post('/v1/mcp-servers', {
      name: 'Team A tools',
      slug: 'team-a-tools',
      description: 'for A',
      mcp_integration_id: 'up',
    });
    expect(created.body).toEqual({ id: expect.any(String), slug: 'team-a-tools', object: 'mcp-server' });
    const id = created.body.id as string;

    const list = await admin.get('/v1/mcp-servers?workspace_id=team-a');
    expect(list.body).toMatchObject({ object: 'list', total: 1 });
    expect(list.body.data[0]).toMatchObject({
      id,
      organisation_id: orgId,
      name: 'Team A tools',
      description: 'for A',
      status: 'active',
      slug: 'team-a-tools',
      workspace_id: a.id,
      workspace_name: 'Team A',
      workspace_slug: 'team-a',
      mcp_integration_id: integration,
      mcp_integration_slug: 'up',
      mcp_integration_url: upstream.url,
      auth_type: 'none',
      url: `${t.baseUrl}/v1/mcp/team-a-tools/mcp`,
      object: 'mcp-server',
    });
    expect((await keyB.get('/v1/mcp-servers')).body.total).toBe(0);
    expect((await keyB.get(`/v1/mcp-servers/${id}`)).status).toBe(404);
    expect((await keyB.put(`/v1/mcp-servers/${id}`, { name: 'stolen' })).status).toBe(404);

    const one = await keyA.get('/v1/mcp-servers/team-a-tools');
    expect(one.body).toMatchObject({
      id,
      mcp_integration_details: { id: integration, slug: 'up', url: upstream.url, transport: 'http', auth_type: 'none' },
      default_user_access: 'allow',
      input_guardrails: null,
    });
    expect((await keyA.put(`/v1/mcp-servers/${id}`, { name: 'A tools' })).body).toEqual({});
    expect((await keyA.get(`/v1/mcp-servers/${id}`)).body.name).toBe('A tools');

    const test = await keyA.post(`/v1/mcp-servers/${id}/test`);
    expect(test.body).toEqual({
      success: true,
      status_code: 200,
      response_time_ms: expect.any(Number),
      url: upstream.url,
      server_name: 'test-upstream',
      error: null,
    });
    expect((await keyA.get(`/v1/mcp-servers/${id}/metadata`)).body).toMatchObject({
      mcp_server_id: id,
      mcp_integration_id: integration,
      server_name: 'test-upstream',
      sync_status: 'synced',
    });
    const caps = await keyA.get(`/v1/mcp-servers/${id}/capabilities?type=prompt`);
    expect(caps.body.data.map((c: any) => [c.name, c.enabled, c.integration_enabled])).toEqual([
      ['greet', true, true],
      ['secret-prompt', true, true],
    ]);

    // User access: members of team-a (and the organisation's owners and admins).
    const member = await addUser(t.server.db, orgId, 'member', [{ workspaceId: a.id, role: 'member' }]);
    const outsider = await addUser(t.server.db, orgId, 'member');
    const wrong = await keyA.put(`/v1/mcp-servers/${id}/user-access`, {
      user_access: [{ user_id: outsider, enabled: true }],
    });
    expect(wrong.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'user_access[0].user_id' });
    expect(
      (
        await keyA.put(`/v1/mcp-servers/${id}/user-access`, {
          default_user_access: 'deny',
          user_access: [{ user_id: member, enabled: true }],
        })
      ).body,
    ).toEqual({ success: true });
    const access = await keyA.get(`/v1/mcp-servers/${id}/user-access?page=1`);
    expect(access.body).toMatchObject({ object: 'list', default_user_access: 'deny', has_more: false });
    expect(access.body.data.find((u: any) => u.user_id === member)).toMatchObject({
      enabled: true,
      has_override: true,
      connection_status: 'not_connected',
    });
    expect(access.body.data.some((u: any) => u.user_id === outsider)).toBe(false);

    // Connections: made by the gateway on initialize; forgotten on request.
    await t.server.db
      .insertInto('mcp_connections')
      .values({ server_id: id, user_id: member, workspace_id: a.id, created_at: 'x', last_updated_at: 'x' })
      .execute();
    expect((await keyA.get(`/v1/mcp-servers/${id}/connections?user_id=${member}`)).body).toMatchObject({
      total: 1,
      has_more: false,
    });
    expect((await keyA.delete(`/v1/mcp-servers/${id}/connections?workspace_id=team-b`)).body.error.code).toBe(
      'NOT_FOUND',
    );
    expect((await keyA.delete(`/v1/mcp-servers/${id}/connections?user_id=${member}&workspace_id=team-a`)).body).toEqual(
      {
        success: true,
      },
    );
    expect((await keyA.get(`/v1/mcp-servers/${id}/connections`)).body.total).toBe(0);

    const audit = await admin.get('/v1/audit-logs?resource_type=mcp_server&page_size=100');
    const done = audit.body.data.filter((r: any) => r.response_status_code === 200);
    expect(audit.body.data.length).toBeGreaterThan(done.length); // refusals are recorded too
    expect(done.map((r: any) => r.action).sort()).toEqual([
      'create',
      'delete_connections',
      'update',
      'update_user_access',
    ]);

    // Archiving the integration archives its servers.
    expect((await admin.delete(`/v1/mcp-integrations/${integration}`)).body).toEqual({});
    expect((await keyA.get(`/v1/mcp-servers/${id}`)).body.status).toBe('archived');
    expect((await keyA.post(`/v1/mcp-servers/${id}/test`)).body.error.code).toBe('INVALID_REQUEST');
    expect((await keyA.get('/v1/mcp-servers?status=archived')).body.total).toBe(1);
    expect((await keyA.delete(`/v1/mcp-servers/${id}`)).body).toEqual({});
  });

  it("checks the guardrails a server names: another workspace's guardrail is refused where it is named", async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    await createWorkspace(admin, 'Team B', 'team-b');
    const integration = (
      await admin.post('/v1/mcp-integrations', {
        name: 'g',
        url: 'http://127.0.0.1:9/mcp',
        transport: 'http',
        auth_type: 'none',
      })
    ).body.id;
    await admin.put(`/v1/mcp-integrations/${integration}/workspaces`, {
      workspaces: [],
      global_workspace_access: { enabled: true },
    });
    const bGuardrail = await admin.post('/v1/guardrails', {
      name: 'B only',
      slug: 'b-only',
      workspace_id: 'team-b',
      checks: [{ id: 'default.contains', parameters: { operator: 'none', words: ['x'] } }],
      actions: { deny: true },
    });
    expect(bGuardrail.status).toBe(200);
    const refused = await admin.post('/v1/mcp-servers', {
      name: 'g',
      mcp_integration_id: integration,
      workspace_id: 'team-a',
      output_guardrails: ['b-only'],
    });
    expect(refused.body.error).toMatchObject({ code: 'WORKSPACE_FORBIDDEN', param: 'output_guardrails[0]' });
    const bad = await admin.post('/v1/mcp-servers', {
      name: 'g',
      mcp_integration_id: integration,
      input_guardrails: [{ 'default.nope': {} }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toMatch(/^input_guardrails\[0\]/);
    const ok = await admin.post('/v1/mcp-servers', {
      name: 'g',
      mcp_integration_id: integration,
      workspace_id: 'team-b',
      output_guardrails: ['b-only'],
    });
    expect(ok.status).toBe(200);
    expect((await admin.get(`/v1/mcp-servers/${ok.body.id}`)).body.output_guardrails).toEqual(['b-only']);
  });
});
