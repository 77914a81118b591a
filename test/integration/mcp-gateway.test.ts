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
    expect(tools.tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo', 'fail', 'shout']);
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

    const logs = await logsOf(t, admin);
    expect(logs).toHaveLength(2);
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
    expect(JSON.parse(one.body.request_body)).toEqual({ name: 'add', arguments: { a: 2, b: 40 } });
    expect(JSON.parse(one.body.response_body)).toEqual({ content: [{ type: 'text', text: '42' }] });
  });
});
