import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startMcpUpstream, startTokenEndpoint, type McpUpstream } from '../helpers/mcp-upstream.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

/** The SDK's client connected to an MCP server through svcgw. */
async function connect(t: TestServer, slug: string, key: string, headers: Record<string, string> = {}) {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/v1/mcp/${slug}/mcp`), {
    requestInit: { headers: { 'x-service-api-key': key, ...headers } },
  });
  await client.connect(transport);
  onTestFinished(() => client.close());
  return client;
}

/** An organisation integration shared with every workspace, and a server of it in `workspace` (synced). */
async function mcpServer(
  admin: ApiClient,
  upstream: McpUpstream,
  options: {
    slug: string;
    workspace?: string;
    transport?: 'http' | 'sse';
    integration?: Record<string, unknown>;
  } & Record<string, unknown>,
) {
  const { slug, workspace, transport, integration: extra, ...serverFields } = options;
  const integration = await admin.post('/v1/mcp-integrations', {
    name: `${slug} upstream`,
    url: upstream.url,
    transport: transport ?? 'http',
    auth_type: 'none',
    ...extra,
  });
  expect(integration.status, JSON.stringify(integration.body)).toBe(200);
  const shared = await admin.put(`/v1/mcp-integrations/${integration.body.id}/workspaces`, {
    workspaces: [],
    global_workspace_access: { enabled: true },
  });
  expect(shared.status).toBe(200);
  const server = await admin.post('/v1/mcp-servers', {
    name: slug,
    slug,
    mcp_integration_id: integration.body.id,
    ...(workspace ? { workspace_id: workspace } : {}),
    ...serverFields,
  });
  expect(server.status, JSON.stringify(server.body)).toBe(200);
  const test = await admin.post(`/v1/mcp-servers/${server.body.id}/test`);
  expect(test.body, JSON.stringify(test.body)).toMatchObject({ success: true });
  return { integrationId: integration.body.id as string, serverId: server.body.id as string };
}

async function logsOf(t: TestServer, admin: ApiClient, query = 'endpoint_type=mcp') {
  await t.server.requestLogs.flush();
  const res = await admin.get(`/v1/logs?${query}`);
  expect(res.status).toBe(200);
  return res.body.data as Array<Record<string, any>>;
}

describe('MCP servers through the gateway (official SDK on both sides)', () => {
  it('lists and calls tools, prompts and resources of a Streamable HTTP server; every tool call is a log record', async () => {
    const t = await startTestServer({ env: { SVCGW_LOG_BODIES: 'ON' } });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const upstream = await startMcpUpstream();
    const { serverId } = await mcpServer(admin, upstream, { slug: 'tools-http' });
    const key = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['mcp.invoke'] });

    const client = await connect(t, 'tools-http', key.key);
    expect(client.getServerVersion()).toMatchObject({ name: 'test-upstream', version: '1.0.0', title: 'tools-http' });
    expect(client.getInstructions()).toBe('Use echo to repeat things.');
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name).sort()).toEqual(['add', 'count', 'echo', 'fail', 'shout']);
    expect(tools.tools.find((tool) => tool.name === 'add')?.inputSchema).toMatchObject({
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });

    const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
    expect(sum.content).toEqual([{ type: 'text', text: '42' }]);
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);

    const prompt = await client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Say hello to Ada' });
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['docs://readme']);
    expect((await client.readResource({ uri: 'docs://readme' })).contents[0]).toMatchObject({ text: 'the readme' });
    expect((await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate)).toEqual([
      'files://{name}',
    ]);
    expect((await client.readResource({ uri: 'files://notes' })).contents[0]).toMatchObject({ text: 'file notes' });
    // The upstream tool's progress reaches the client, on the call's own stream.
    const progress: number[] = [];
    const counted = await client.callTool({ name: 'count', arguments: { n: 3 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(counted.content).toEqual([{ type: 'text', text: 'counted to 3' }]);
    expect(progress).toEqual([1, 2, 3]);

    const logs = await logsOf(t, admin);
    expect(logs).toHaveLength(3);
    const add = logs.find((log) => log.mcp_tool === 'add')!;
    expect(add).toMatchObject({
      endpoint_type: 'mcp',
      mcp_server_id: serverId,
      status_code: 200,
      is_success: true,
      method: 'POST',
      path: '/v1/mcp/tools-http/mcp',
      request_bytes: Buffer.byteLength('{"a":2,"b":40}'),
      response_bytes: expect.any(Number),
      api_key_id: key.id,
    });
    expect(add.latency_ms).toBeGreaterThanOrEqual(0);
    const fail = logs.find((log) => log.mcp_tool === 'fail')!;
    expect(fail).toMatchObject({
      status_code: 200,
      is_success: false,
      error_code: 'MCP_TOOL_ERROR',
      error_message: 'it broke',
    });
    // Bodies follow log_bodies: the call's params and the tool's result.
    const one = await admin.get(`/v1/logs/${add.id}`);
    expect(one.body.request.body).toEqual({ name: 'add', arguments: { a: 2, b: 40 } });
    expect(one.body.response.body).toEqual({ content: [{ type: 'text', text: '42' }] });
    expect(one.body.metrics).toMatchObject({ mcp_tool: 'add', response_status_code: 200 });
    const flat = await admin.get(`/v1/logs/${add.id}?log_format=flat`);
    expect(JSON.parse(flat.body.request_body)).toEqual({ name: 'add', arguments: { a: 2, b: 40 } });
  });

  it('bridges an SSE server too, over one pooled upstream connection for every client call, closed on shutdown', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T10:00:00Z'));
    const t = await startTestServer({ clock, autoClose: false });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const upstream = await startMcpUpstream({ transport: 'sse', name: 'sse-upstream' });
    await mcpServer(admin, upstream, { slug: 'tools-sse', transport: 'sse' });
    const key = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['mcp.invoke'] });
    const streams = () => upstream.received.filter((r) => r.method === 'GET' && r.path === '/sse').length;
    const afterSync = streams();

    const first = await connect(t, 'tools-sse', key.key);
    const second = await connect(t, 'tools-sse', key.key);
    expect(first.getServerVersion()).toMatchObject({ name: 'sse-upstream' });
    for (const client of [first, second, first, second]) {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
      expect((await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).content).toEqual([
        { type: 'text', text: 'echo: hi' },
      ]);
    }
    // Two clients, several sessions' worth of requests: one upstream event stream.
    expect(streams()).toBe(afterSync + 1);
    expect(upstream.openStreams()).toBe(1);
    expect(t.server.mcp.upstreams.size).toBe(1);
    expect(upstream.calls.filter((c) => c.tool === 'echo')).toHaveLength(4);

    // Unused for ten minutes, the connection is closed; the next call makes a new one.
    clock.advance(9 * 60_000);
    t.server.mcp.upstreams.sweep();
    expect(upstream.openStreams()).toBe(1);
    clock.advance(2 * 60_000);
    t.server.mcp.upstreams.sweep();
    await expect.poll(() => upstream.openStreams()).toBe(0);
    expect((await second.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).content).toEqual([
      { type: 'text', text: '3' },
    ]);
    expect(upstream.openStreams()).toBe(1);

    await first.close();
    await second.close();
    await t.close();
    await expect.poll(() => upstream.openStreams()).toBe(0);
  });

  it('keeps disabled tools, prompts and resources out of lists and refuses them by name', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const upstream = await startMcpUpstream();
    const { integrationId } = await mcpServer(admin, upstream, { slug: 'filtered' });
    const other = await admin.post('/v1/mcp-servers', {
      name: 'unfiltered',
      slug: 'unfiltered',
      mcp_integration_id: integrationId,
    });
    expect(other.status).toBe(200);
    const key = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['mcp.invoke'] });

    // Off for every server of the integration:
    expect(
      (
        await admin.put(`/v1/mcp-integrations/${integrationId}/capabilities`, {
          capabilities: [
            { name: 'shout', type: 'tool', enabled: false },
            { name: 'secret-prompt', type: 'prompt', enabled: false },
            { name: 'files://{name}', type: 'resource_template', enabled: false },
          ],
        })
      ).body,
    ).toEqual({ success: true });
    // Off for this server only:
    expect(
      (
        await admin.put('/v1/mcp-servers/filtered/capabilities', {
          capabilities: [{ name: 'echo', type: 'tool', enabled: false }],
        })
      ).body,
    ).toEqual({ success: true });

    const client = await connect(t, 'filtered', key.key);
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['add', 'count', 'fail']);
    await expect(client.callTool({ name: 'shout', arguments: { text: 'x' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Tool shout not found'),
    });
    await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toMatchObject({ code: -32602 });
    expect(upstream.calls.map((c) => c.tool)).toEqual([]);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greet']);
    await expect(client.getPrompt({ name: 'secret-prompt' })).rejects.toMatchObject({ code: -32602 });
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    await expect(client.readResource({ uri: 'files://notes' })).rejects.toMatchObject({ code: -32602 });
    expect((await client.readResource({ uri: 'docs://readme' })).contents[0]).toMatchObject({ text: 'the readme' });

    // The other server of the integration keeps echo, not shout.
    const unfiltered = await connect(t, 'unfiltered', key.key);
    expect((await unfiltered.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      'add',
      'count',
      'echo',
      'fail',
    ]);

    const refused = (await logsOf(t, admin)).filter((log) => log.status_code === 404);
    expect(refused.map((log) => [log.mcp_tool, log.error_code]).sort()).toEqual([
      ['echo', 'NOT_FOUND'],
      ['shout', 'NOT_FOUND'],
    ]);
    const listed = await admin.get('/v1/mcp-servers/filtered/capabilities?type=tool');
    expect(listed.body.data.map((c: any) => [c.name, c.enabled, c.integration_enabled])).toEqual([
      ['add', true, true],
      ['count', true, true],
      ['echo', false, true],
      ['fail', true, true],
      ['shout', false, false],
    ]);
    expect(listed.body.counts.tools).toEqual({ total: 5, enabled: 3 });
  });

  it("enforces workspace and user access: another workspace's server is not found, a user without access is refused", async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const orgId = t.server.bootstrap.organisationId;
    const upstream = await startMcpUpstream();
    const a = await createWorkspace(admin, 'Team A', 'team-a');
    const b = await createWorkspace(admin, 'Team B', 'team-b');
    const { integrationId, serverId } = await mcpServer(admin, upstream, { slug: 'team-a-tools', workspace: 'team-a' });
    const alice = await addUser(t.server.db, orgId, 'member', [{ workspaceId: a.id, role: 'member' }]);
    const bob = await addUser(t.server.db, orgId, 'member', [{ workspaceId: a.id, role: 'member' }]);
    const carol = await addUser(t.server.db, orgId, 'member', [{ workspaceId: b.id, role: 'member' }]);
    const keyOf = async (workspace: string, user: string) =>
      (await createWorkspaceKey(admin, { workspace_id: workspace, user_id: user, scopes: ['mcp.invoke'] })).key;
    const [aliceKey, bobKey, carolKey] = [
      await keyOf('team-a', alice),
      await keyOf('team-a', bob),
      await keyOf('team-b', carol),
    ];

    expect(
      (await admin.put(`/v1/mcp-servers/${serverId}/user-access`, { user_access: [{ user_id: bob, enabled: false }] }))
        .body,
    ).toEqual({ success: true });
    const aliceClient = await connect(t, 'team-a-tools', aliceKey);
    expect((await aliceClient.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).content).toEqual([
      { type: 'text', text: '2' },
    ]);
    await expect(connect(t, 'team-a-tools', bobKey)).rejects.toMatchObject({
      code: 403,
      message: expect.stringContaining('MCP_ACCESS_DENIED'),
    });
    // Team B's key cannot tell the server exists.
    await expect(connect(t, 'team-a-tools', carolKey)).rejects.toMatchObject({
      code: 404,
      message: expect.stringContaining('NOT_FOUND'),
    });

    // Deny by default, allow one user.
    await admin.put(`/v1/mcp-servers/${serverId}/user-access`, {
      default_user_access: 'deny',
      user_access: [{ user_id: bob, enabled: true }],
    });
    await expect(connect(t, 'team-a-tools', aliceKey)).rejects.toThrow(/MCP_ACCESS_DENIED/);
    const bobClient = await connect(t, 'team-a-tools', bobKey);
    expect((await bobClient.listTools()).tools.length).toBe(5);

    const access = await admin.get(`/v1/mcp-servers/${serverId}/user-access`);
    expect(access.body.default_user_access).toBe('deny');
    const row = (user: string) => access.body.data.find((u: any) => u.user_id === user);
    expect(row(alice)).toMatchObject({ enabled: false, has_override: false, connection_status: 'connected' });
    expect(row(bob)).toMatchObject({ enabled: true, has_override: true, connection_status: 'connected' });
    expect(row(carol)).toBeUndefined();
    const connections = await admin.get(`/v1/mcp-servers/${serverId}/connections`);
    expect(connections.body.data.map((c: any) => c.user_id).sort()).toEqual([alice, bob].sort());

    // An integration no longer shared with the workspace: its servers stop answering.
    await admin.put(`/v1/mcp-integrations/${integrationId}/workspaces`, {
      workspaces: [{ id: 'team-a', enabled: false }],
    });
    await expect(connect(t, 'team-a-tools', bobKey)).rejects.toThrow(/not shared/);
  });

  it('applies rate limits to tool calls (a policy naming endpoint_type mcp), with a log record for the refusal', async () => {
    const t = await startTestServer({ clock: createManualClock(Date.parse('2026-06-01T10:00:00Z')) });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const upstream = await startMcpUpstream();
    await mcpServer(admin, upstream, { slug: 'limited' });
    const policy = await admin.post('/v1/policies/rate-limits', {
      workspace_id: 'default',
      conditions: [{ key: 'endpoint_type', value: 'mcp' }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 2,
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    const key = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['mcp.invoke'] });
    const client = await connect(t, 'limited', key.key);
    await client.listTools(); // lists are not tool calls
    await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
    await client.callTool({ name: 'add', arguments: { a: 1, b: 3 } });
    await expect(client.callTool({ name: 'add', arguments: { a: 1, b: 4 } })).rejects.toMatchObject({
      code: 429,
      message: expect.stringContaining('RATE_LIMITED'),
    });
    // A plain HTTP client sees the limit's headers.
    const raw = await fetch(`${t.baseUrl}/v1/mcp/limited/mcp`, {
      method: 'POST',
      headers: {
        'x-service-api-key': key.key,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'add', arguments: { a: 1, b: 5 } },
      }),
    });
    expect(raw.status).toBe(429);
    expect(Number(raw.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(raw.headers.get('x-ratelimit-limit')).toBe('2');
    expect(upstream.calls).toHaveLength(2);
    const logs = await logsOf(t, admin);
    expect(logs.map((log) => log.status_code).sort()).toEqual([200, 200, 429, 429]);
    expect(logs.find((log) => log.status_code === 429)).toMatchObject({ mcp_tool: 'add', error_code: 'RATE_LIMITED' });
  });

  it('authenticates upstream with the client-credentials grant (token cached, sent as a bearer; token endpoint configured or discovered), or custom headers', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const tokens = await startTokenEndpoint({ id: 'svcgw-client', secret: 's3cret-value-0123456789' });
    const upstream = await startMcpUpstream({
      authorize: (headers) => tokens.issued.some((token) => headers.authorization === `Bearer ${token}`),
    });
    await mcpServer(admin, upstream, {
      slug: 'oauth-tools',
      integration: {
        auth_type: 'oauth_client_credentials',
        configurations: {
          client_id: 'svcgw-client',
          client_secret: 's3cret-value-0123456789',
          token_url: tokens.url,
          scope: 'tools',
        },
      },
    });
    const key = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['mcp.invoke'] });
    const client = await connect(t, 'oauth-tools', key.key);
    for (let i = 0; i < 3; i++) await client.callTool({ name: 'add', arguments: { a: i, b: i } });
    // One token for the connection test's own connection, one for the pooled connection.
    expect(tokens.issued).toHaveLength(2);
    expect(upstream.received.every((r) => r.headers.authorization?.startsWith('Bearer tok-'))).toBe(true);

    // A wrong secret: the test says why, and the secret is never shown.
    const integration = (await admin.get('/v1/mcp-integrations?search=oauth-tools')).body.data[0];
    expect(integration.configurations).toMatchObject({ client_id: 'svcgw-client', client_secret: 's3cr****6789' });
    await admin.put(`/v1/mcp-integrations/${integration.id}`, {
      configurations: { ...integration.configurations, client_secret: 'wrong-secret-value-0000' },
    });
    const test = await admin.post('/v1/mcp-servers/oauth-tools/test');
    expect(test.body).toMatchObject({ success: false, status_code: 401, server_name: null });
    expect(test.body.error).toMatch(/refused the client credentials \(invalid_client\)/);
    const audit = await admin.get('/v1/audit-logs?resource_type=mcp_integration');
    expect(JSON.stringify(audit.body)).not.toMatch(/s3cret-value|wrong-secret-value/);
    expect(t.logLines.join('\n')).not.toMatch(/s3cret-value|wrong-secret-value/);

    // oauth_auto: the token endpoint is found by discovery from the MCP server's metadata.
    const discovered = await startMcpUpstream({
      authorizationServer: tokens.base,
      authorize: (headers) => tokens.issued.some((token) => headers.authorization === `Bearer ${token}`),
    });
    await mcpServer(admin, discovered, {
      slug: 'auto-tools',
      integration: {
        auth_type: 'oauth_auto',
        configurations: { client_id: 'svcgw-client', client_secret: 's3cret-value-0123456789' },
      },
    });
    const autoClient = await connect(t, 'auto-tools', key.key);
    expect((await autoClient.callTool({ name: 'add', arguments: { a: 20, b: 1 } })).content).toEqual([
      { type: 'text', text: '21' },
    ]);
    expect(discovered.received.some((r) => r.path.startsWith('/.well-known/oauth-protected-resource'))).toBe(true);

    // Custom headers: sent with every request.
    const keyed = await startMcpUpstream({ authorize: (headers) => headers['x-api-key'] === 'upstream-key-123' });
    await mcpServer(admin, keyed, {
      slug: 'header-tools',
      integration: { auth_type: 'headers', configurations: { custom_headers: { 'X-Api-Key': 'upstream-key-123' } } },
    });
    const headerClient = await connect(t, 'header-tools', key.key);
    expect((await headerClient.callTool({ name: 'echo', arguments: { text: 'k' } })).content).toEqual([
      { type: 'text', text: 'echo: k' },
    ]);
  });

  it("runs the server's guardrails on tool arguments and results", async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const upstream = await startMcpUpstream();
    const stored = await admin.post('/v1/guardrails', {
      name: 'No forbidden words',
      slug: 'no-forbidden',
      checks: [{ id: 'default.contains', parameters: { operator: 'none', words: ['forbidden'] } }],
      actions: { deny: true },
    });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    await mcpServer(admin, upstream, {
      slug: 'guarded',
      input_guardrails: ['no-forbidden', { 'default.pii': { redact: true } }],
      output_guardrails: [{ 'default.contains': { operator: 'none', words: ['CLASSIFIED'] }, deny: true }],
    });
    const key = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['mcp.invoke'] });
    const client = await connect(t, 'guarded', key.key);

    expect((await client.callTool({ name: 'echo', arguments: { text: 'fine' } })).content).toEqual([
      { type: 'text', text: 'echo: fine' },
    ]);
    // Denied on the arguments: the server never sees the call.
    await expect(client.callTool({ name: 'echo', arguments: { text: 'a forbidden thing' } })).rejects.toMatchObject({
      code: -32046,
      data: {
        hook_results: { before_request_hooks: [expect.objectContaining({ id: 'no-forbidden', verdict: false })] },
      },
    });
    // Redacted on the way: the server sees the masked e-mail address.
    await client.callTool({ name: 'echo', arguments: { text: 'mail me at ada@example.com' } });
    expect(upstream.calls.map((c) => c.args.text)).toEqual(['fine', expect.not.stringContaining('ada@example.com')]);
    // Denied on the result: the tool ran, the client does not get what it said.
    await expect(client.callTool({ name: 'shout', arguments: { text: 'classified' } })).rejects.toMatchObject({
      code: -32046,
    });
    expect(upstream.calls.at(-1)).toEqual({ tool: 'shout', args: { text: 'classified' } });

    const logs = await logsOf(t, admin);
    expect(logs.map((log) => [log.mcp_tool, log.status_code, log.guardrail_verdict]).sort()).toEqual([
      ['echo', 200, 'passed'],
      ['echo', 200, 'passed'],
      ['echo', 446, 'denied'],
      ['shout', 446, 'denied'],
    ]);
  });

  it('keeps the capability catalogue and metadata in step with the server: periodically, on a test, on list_changed', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T10:00:00Z'));
    const t = await startTestServer({ clock, env: { SVCGW_MCP_SYNC_INTERVAL_MS: '600000' } });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const upstream = await startMcpUpstream({ name: 'changing-upstream' });
    const { integrationId } = await mcpServer(admin, upstream, { slug: 'changing' });
    const tools = async () =>
      (await admin.get(`/v1/mcp-integrations/${integrationId}/capabilities?type=tool`)).body.data.map(
        (c: any) => `${c.name}:${c.enabled ? 'on' : 'off'}`,
      );

    const before = await admin.get(`/v1/mcp-integrations/${integrationId}/metadata`);
    expect(before.body).toMatchObject({
      server_name: 'changing-upstream',
      server_version: '1.0.0',
      server_title: 'Test upstream',
      protocol_version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      capability_flags: { tools: expect.any(Object), prompts: expect.any(Object), resources: expect.any(Object) },
      instructions: 'Use echo to repeat things.',
      sync_status: 'synced',
      last_synced_at: '2026-06-01T10:00:00.000Z',
      sync_error: null,
    });
    await admin.put(`/v1/mcp-integrations/${integrationId}/capabilities`, {
      capabilities: [{ name: 'fail', type: 'tool', enabled: false }],
    });

    // The server changes: a new version, a new tool, one tool gone.
    upstream.catalogue.version = '2.0.0';
    upstream.catalogue.tools.push('deploy');
    upstream.catalogue.without.push('fail');
    expect(await t.server.mcp.sync.runOnce()).toBe(0); // synced less than the interval ago
    clock.advance(600_001);
    expect(await t.server.mcp.sync.runOnce()).toBe(1);
    expect(await tools()).toEqual(['add:on', 'count:on', 'deploy:on', 'echo:on', 'shout:on']);
    const after = await admin.get('/v1/mcp-servers/changing/metadata');
    expect(after.body).toMatchObject({ server_version: '2.0.0', last_synced_at: '2026-06-01T10:10:00.001Z' });

    // The tool comes back: still disabled, as it was left.
    upstream.catalogue.without.length = 0;
    expect((await admin.post('/v1/mcp-servers/changing/test')).body).toMatchObject({
      success: true,
      status_code: 200,
      server_name: 'changing-upstream',
      url: upstream.url,
    });
    expect(await tools()).toEqual(['add:on', 'count:on', 'deploy:on', 'echo:on', 'fail:off', 'shout:on']);

    // A server that is gone: the test says so, the metadata keeps the last good values and the error.
    await upstream.close();
    const failed = await admin.post('/v1/mcp-servers/changing/test');
    expect(failed.body).toMatchObject({ success: false, status_code: null, server_name: null });
    expect(failed.body.error).toMatch(/could not be reached/);
    expect((await admin.get(`/v1/mcp-integrations/${integrationId}/metadata`)).body).toMatchObject({
      server_version: '2.0.0',
      sync_status: 'error',
      sync_error: failed.body.error,
    });

    // An SSE server that announces a new tool on its open stream: svcgw syncs by itself.
    const sse = await startMcpUpstream({ transport: 'sse', name: 'live-upstream' });
    const live = await mcpServer(admin, sse, { slug: 'live', transport: 'sse' });
    const key = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['mcp.invoke'] });
    const client = await connect(t, 'live', key.key);
    await client.listTools(); // the pooled connection (and its event stream) is open
    sse.addLiveTool('hotfix');
    await expect
      .poll(async () =>
        (await admin.get(`/v1/mcp-integrations/${live.integrationId}/capabilities?type=tool`)).body.data.map(
          (c: any) => c.name,
        ),
      )
      .toContain('hotfix');
  });

  it('answers plain HTTP mistakes in the one error body', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const upstream = await startMcpUpstream();
    await mcpServer(admin, upstream, { slug: 'plain' });
    const key = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['mcp.invoke'] });
    const noScope = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['completions.write'] });
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${t.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          'x-service-api-key': key.key,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body,
      });
    const error = async (res: Response) =>
      ((await res.json()) as { error: { code: string; param: string | null } }).error;

    const ok = await post('/v1/mcp/plain/mcp', ping);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('"result":{}');
    let res = await post('/v1/mcp/plain/mcp', ping, { accept: 'application/json' });
    expect([res.status, (await error(res)).code]).toEqual([406, 'NOT_ACCEPTABLE']);
    res = await post('/v1/mcp/plain/mcp', '{"hello":"world"}');
    expect([res.status, (await error(res)).code]).toEqual([400, 'INVALID_REQUEST']);
    res = await post('/v1/mcp/plain/mcp', '{not json');
    expect([res.status, (await error(res)).code]).toEqual([400, 'INVALID_JSON']);
    res = await post('/v1/mcp/nobody/mcp', ping);
    expect([res.status, (await error(res)).code]).toEqual([404, 'NOT_FOUND']);
    res = await post('/v1/mcp/plain/mcp', ping, { 'x-service-api-key': noScope.key });
    expect([res.status, (await error(res)).code]).toEqual([403, 'MISSING_SCOPE']);
    res = await post('/v1/mcp/plain/other', ping);
    expect([res.status, (await error(res)).code]).toEqual([404, 'ROUTE_NOT_FOUND']);
    const get = await fetch(`${t.baseUrl}/v1/mcp/plain/mcp`, { headers: { 'x-service-api-key': key.key } });
    expect([get.status, get.headers.get('allow'), (await error(get)).code]).toEqual([
      405,
      'POST',
      'METHOD_NOT_ALLOWED',
    ]);
  });

  it('connects again when the upstream forgets its session (a Streamable HTTP server with sessions)', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const upstream = await startMcpUpstream({ sessions: true });
    await mcpServer(admin, upstream, { slug: 'sessions' });
    const key = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['mcp.invoke'] });
    const client = await connect(t, 'sessions', key.key);
    const initializes = () =>
      upstream.received.filter((r) => r.method === 'POST' && !r.headers['mcp-session-id']).length;

    await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } });
    await client.callTool({ name: 'add', arguments: { a: 2, b: 2 } });
    const before = initializes(); // the test's own connection and the pooled one
    await upstream.expireSessions();
    expect((await client.callTool({ name: 'add', arguments: { a: 3, b: 3 } })).content).toEqual([
      { type: 'text', text: '6' },
    ]);
    expect(initializes()).toBe(before + 1);
    expect(upstream.calls.map((c) => c.args)).toEqual([
      { a: 1, b: 1 },
      { a: 2, b: 2 },
      { a: 3, b: 3 },
    ]);
  });
});
