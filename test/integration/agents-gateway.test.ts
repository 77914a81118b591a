import { AgentCard } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { startA2aAgent } from '../helpers/a2a-agent.js';
import { createAgentIntegration, createAgentServer, message03, rpc, sseEvents } from '../helpers/agents.js';
import { addUser, createWorkspace, createWorkspaceKey, validPolicy } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const STREAM = { accept: 'text/event-stream' };

/** The gateway with the A2A peer behind one agent server (slug echo) in the default workspace. */
async function setup(options: { clock?: ReturnType<typeof createManualClock> } = {}) {
  const agent = await startA2aAgent({ token: 'peer-secret' });
  const t = await startTestServer(options.clock ? { clock: options.clock } : {});
  const admin = apiClient(t.baseUrl, t.adminKey);
  const integration = await createAgentIntegration(admin, agent.url);
  const server = await createAgentServer(admin, {
    agent_integration_id: integration.id,
    workspace_id: 'default',
    slug: 'echo',
  });
  const call = (
    body: unknown,
    options: { headers?: Record<string, string>; key?: string; signal?: AbortSignal; agent?: string } = {},
  ) =>
    fetch(`${t.baseUrl}/v1/agents/${options.agent ?? 'echo'}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-api-key': options.key ?? t.adminKey,
        ...options.headers,
      },
      body: JSON.stringify(body),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  const logs = async (count: number) => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const res = await admin.get('/v1/logs?endpoint_type=agent&page_size=100');
      if (res.body.data.length >= count) return res.body.data as any[];
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`expected ${count} agent log records`);
  };
  return { agent, t, admin, integration, server, call, logs };
}

/** The SDK's own client, reaching the agent through the gateway with an svcgw key. */
function sdkFactory(key: string) {
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'x-service-api-key': key } });
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
}

describe('agent gateway', () => {
  it('serves the agent card pointing at the gateway, and the A2A SDK client sends and streams through it', async () => {
    const { agent, t, admin, server } = await setup();
    expect(server.url).toBe(`${t.baseUrl}/v1/agents/echo`);
    expect(server.card_url).toBe(`${t.baseUrl}/v1/agents/echo/.well-known/agent-card.json`);
    const disabled = await admin.put(`/v1/agent-servers/${server.id}/skills`, {
      skills: [{ id: 'whisper', enabled: false }],
    });
    expect(disabled.status).toBe(200);

    // A 1.0 client asks for the 1.0 card; the JSON-RPC interfaces point at the gateway, the REST one is gone.
    const v1 = await fetch(server.card_url, { headers: { 'x-service-api-key': t.adminKey, 'A2A-Version': '1.0' } });
    expect(v1.status).toBe(200);
    const card = (await v1.json()) as any;
    expect(card.supportedInterfaces).toEqual([
      { url: server.url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      { url: server.url, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
    ]);
    expect(card.skills.map((s: any) => s.id)).toEqual(['echo', 'shout']);
    expect(JSON.stringify(card)).not.toContain(agent.url);
    expect(card.securitySchemes.svcgw.apiKeySecurityScheme).toMatchObject({
      location: 'header',
      name: 'x-service-api-key',
    });
    // A 0.3 client (no A2A-Version header) gets the 0.3 card, with its url at the gateway too.
    const legacy = (await (
      await fetch(server.card_url, { headers: { 'x-service-api-key': t.adminKey } })
    ).json()) as any;
    expect(legacy).toMatchObject({ url: server.url, protocolVersion: '0.3', preferredTransport: 'JSONRPC' });
    expect(legacy.skills.map((s: any) => s.id)).toEqual(['echo', 'shout']);
    expect(JSON.stringify(legacy)).not.toContain(agent.url);

    const client = await sdkFactory(t.adminKey).createFromUrl(`${server.url}/`);
    const sent = await client.sendMessage({
      message: { messageId: 'm-1', role: 1, parts: [{ content: { $case: 'text', value: 'hello' } }] },
    } as any);
    expect(sent).toMatchObject({ status: { state: 3 } });
    expect((sent as any).artifacts[0].parts[0].content).toEqual({ $case: 'text', value: 'echo: hello' });

    const kinds: string[] = [];
    for await (const event of client.sendMessageStream({
      message: { messageId: 'm-2', role: 1, parts: [{ content: { $case: 'text', value: 'streamed' } }] },
    } as any))
      kinds.push((event as any).payload.$case);
    expect(kinds).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);

    // The agent got the integration's token, never the caller's svcgw key.
    const rpcCalls = agent.requests.filter((r) => r.path === '/a2a/jsonrpc' || r.path === '/');
    expect(rpcCalls.length).toBeGreaterThan(0);
    for (const request of agent.requests) {
      expect(request.headers.authorization).toBe('Bearer peer-secret');
      expect(request.headers['x-service-api-key']).toBeUndefined();
    }
    expect(AgentCard).toBeDefined();
  });

  it('relays message/send, message/stream (event by event), tasks/get and tasks/cancel by their A2A 0.3 names', async () => {
    const { agent, call } = await setup();
    const sent = await call(rpc('message/send', message03('hello')));
    expect(sent.status).toBe(200);
    expect(sent.headers.get('x-service-request-id')).toBeTruthy();
    const task = ((await sent.json()) as any).result;
    expect(task).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    expect(task.artifacts[0].parts[0]).toEqual({ kind: 'text', text: 'echo: hello' });

    const got = (await (await call(rpc('tasks/get', { id: task.id }))).json()) as any;
    expect(got.result).toMatchObject({ id: task.id, status: { state: 'completed' } });
    // A JSON-RPC error of the agent reaches the client as the agent sent it.
    const missing = (await (await call(rpc('tasks/get', { id: 'no-such-task' }))).json()) as any;
    expect(missing.error.code).toBe(-32001);

    // The first event arrives while the agent still holds the rest: nothing is buffered.
    const streamed = await call(rpc('message/stream', message03('hold')), { headers: STREAM });
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    const events = sseEvents(streamed);
    const first = await events.next();
    expect(first.result).toMatchObject({ kind: 'task', status: { state: 'submitted' } });
    agent.release();
    const rest: any[] = [];
    for (let event = await events.next(); event !== null; event = await events.next()) rest.push(event.result);
    expect(rest.map((e) => e.kind)).toEqual(['status-update', 'artifact-update', 'status-update']);
    expect(rest[1].artifact.parts[0].text).toBe('echo: hold');
    expect(rest[2]).toMatchObject({ status: { state: 'completed' }, final: true });

    // A long task is cancelled through the gateway while its stream is open.
    const long = sseEvents(await call(rpc('message/stream', message03('long')), { headers: STREAM }));
    const started = (await long.next()).result;
    expect((await long.next()).result).toMatchObject({ kind: 'status-update', status: { state: 'working' } });
    const cancelled = (await (await call(rpc('tasks/cancel', { id: started.id }))).json()) as any;
    expect(cancelled.result).toMatchObject({ id: started.id, status: { state: 'canceled' } });
    expect((await long.next()).result).toMatchObject({ status: { state: 'canceled' }, final: true });
    expect(await long.next()).toBeNull();
  });

  it('aborts the call to the agent when the client goes away mid-stream', async () => {
    const { agent, call, logs } = await setup();
    const controller = new AbortController();
    const streamed = await call(rpc('message/stream', message03('hold')), {
      headers: STREAM,
      signal: controller.signal,
    });
    const events = sseEvents(streamed);
    expect((await events.next()).result.kind).toBe('task');
    controller.abort();
    for (let attempt = 0; attempt < 200 && agent.closedEarly === 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(agent.closedEarly).toBe(1);
    agent.release();
    const [record] = await logs(1);
    expect(record).toMatchObject({
      rpc_method: 'message/stream',
      status_code: 499,
      error_code: 'CLIENT_CLOSED_REQUEST',
      stream: true,
    });
  });

  it('refuses callers without access: other workspaces (404), users without access, disabled skills, keys without agents.invoke', async () => {
    const { t, admin, integration, call, logs } = await setup();
    const orgId = t.server.bootstrap.organisationId;
    const teamA = await createWorkspace(admin, 'Team A', 'team-a');
    const teamB = await createWorkspace(admin, 'Team B', 'team-b');
    const alice = await addUser(t.server.db, orgId, 'member', [{ workspaceId: teamA.id, role: 'member' }]);
    const bob = await addUser(t.server.db, orgId, 'member', [{ workspaceId: teamB.id, role: 'member' }]);
    const aliceKey = (
      await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['agents.invoke'], user_id: alice })
    ).key;
    const bobKey = (
      await createWorkspaceKey(admin, { workspace_id: 'team-b', scopes: ['agents.invoke'], user_id: bob })
    ).key;
    const serviceKey = (
      await admin.post('/v1/api-keys/workspace/service', {
        name: 'bot',
        workspace_id: 'team-a',
        scopes: ['agents.invoke'],
      })
    ).body.key as string;
    const chatOnly = (
      await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['completions.write'], user_id: alice })
    ).key;
    const server = await createAgentServer(admin, {
      agent_integration_id: integration.slug,
      workspace_id: 'team-a',
      slug: 'echo-a',
    });
    const send = (key: string, metadata?: Record<string, unknown>) =>
      call(rpc('message/send', message03('hi', metadata)), { key, agent: 'echo-a' });
    const codeOf = async (res: Response) => ({
      status: res.status,
      code: ((await res.json()) as any).error?.code ?? null,
    });

    expect((await send(aliceKey)).status).toBe(200);
    // Another workspace's server is not found, by slug or by id, card included.
    expect(await codeOf(await send(bobKey))).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect(await codeOf(await call(rpc('message/send', message03('hi')), { key: bobKey, agent: server.id }))).toEqual({
      status: 404,
      code: 'NOT_FOUND',
    });
    expect((await fetch(server.card_url, { headers: { 'x-service-api-key': bobKey } })).status).toBe(404);
    expect(await codeOf(await send(chatOnly))).toEqual({ status: 403, code: 'MISSING_SCOPE' });

    // Default deny: Alice is refused, a service key is not a person and still passes; an override lets Alice in.
    expect(
      (await admin.put(`/v1/agent-servers/${server.id}/user-access`, { default_user_access: 'deny' })).status,
    ).toBe(200);
    expect(await codeOf(await send(aliceKey))).toEqual({ status: 403, code: 'AGENT_ACCESS_DENIED' });
    expect((await fetch(server.card_url, { headers: { 'x-service-api-key': aliceKey } })).status).toBe(403);
    expect((await send(serviceKey)).status).toBe(200);
    const access = await admin.put(`/v1/agent-servers/${server.id}/user-access`, {
      user_access: [{ user_id: alice, enabled: true }],
    });
    expect(access.body).toEqual({ success: true });
    expect((await send(aliceKey)).status).toBe(200);

    // A message that names a disabled skill is refused; one that names an enabled skill goes through.
    await admin.put(`/v1/agent-integrations/${integration.id}/skills`, { skills: [{ id: 'shout', enabled: false }] });
    expect(await codeOf(await send(aliceKey, { skill_id: 'shout' }))).toEqual({
      status: 403,
      code: 'AGENT_SKILL_DISABLED',
    });
    expect((await send(aliceKey, { skill_id: 'echo' })).status).toBe(200);

    // The workspace loses the integration: its server stops answering; archived, it is gone.
    await admin.put(`/v1/agent-integrations/${integration.id}/workspaces`, {
      workspaces: [],
      global_workspace_access: { enabled: false },
    });
    expect(await codeOf(await send(serviceKey))).toEqual({ status: 403, code: 'AGENT_ACCESS_DENIED' });
    await admin.put(`/v1/agent-integrations/${integration.id}/workspaces`, {
      workspaces: [{ id: 'team-a', enabled: true }],
    });
    expect((await send(serviceKey)).status).toBe(200);
    // The agent refuses the integration's credentials: the operator's problem, not the caller's key.
    await admin.put(`/v1/agent-integrations/${integration.id}`, { configurations: { bearer_token: 'wrong' } });
    expect(await codeOf(await send(serviceKey))).toEqual({ status: 502, code: 'AGENT_UNAVAILABLE' });
    expect((await fetch(server.card_url, { headers: { 'x-service-api-key': serviceKey } })).status).toBe(502);
    await admin.put(`/v1/agent-integrations/${integration.id}`, { configurations: { bearer_token: 'peer-secret' } });
    expect((await send(serviceKey)).status).toBe(200);
    await admin.delete(`/v1/agent-servers/${server.id}`);
    expect(await codeOf(await send(serviceKey))).toEqual({ status: 404, code: 'NOT_FOUND' });

    // Refusals after the server was found are logged against it, in its workspace.
    const records = await logs(10);
    const denied = records.filter((r) => r.error_code === 'AGENT_ACCESS_DENIED');
    expect(denied.length).toBe(3);
    for (const record of denied)
      expect(record).toMatchObject({ agent_server_id: server.id, workspace_id: teamA.id, status_code: 403 });
    expect(records.some((r) => r.error_code === 'AGENT_SKILL_DISABLED' && r.rpc_method === 'message/send')).toBe(true);
  });

  it('logs every call with its server, method and sizes, and a rate-limit policy on endpoint_type agent limits agent calls', async () => {
    const clock = createManualClock(Date.parse('2026-05-04T10:00:05Z'));
    const { t, admin, server, integration, call, logs } = await setup({ clock });
    const policy = await admin.post(
      '/v1/policies/rate-limits',
      validPolicy({ conditions: [{ key: 'endpoint_type', value: 'agent' }], value: 2, workspace_id: 'default' }),
    );
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    const body = rpc('message/send', message03('counted'));
    const first = await call(body);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await call(body)).status).toBe(200);
    const limited = await call(body);
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as any).error.code).toBe('RATE_LIMITED');
    expect(limited.headers.get('retry-after')).toBeTruthy();
    // The chat gateway is another endpoint type: the policy leaves it alone (no provider: a 400, not a 429).
    const chat = await fetch(`${t.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-api-key': t.adminKey },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(chat.status).toBe(400);
    clock.advance(60_000);
    expect((await call(body)).status).toBe(200);
    const streamed = sseEvents(await call(rpc('message/stream', message03('logged')), { headers: STREAM }));
    while ((await streamed.next()) !== null);

    const records = await logs(5);
    const ok = records.filter((r) => r.status_code === 200 && r.rpc_method === 'message/send');
    expect(ok.length).toBe(3);
    for (const record of ok)
      expect(record).toMatchObject({
        endpoint_type: 'agent',
        provider: 'a2a',
        model: 'echo',
        agent_server_id: server.id,
        path: '/v1/agents/echo',
        method: 'POST',
        request_bytes: JSON.stringify(body).length,
        stream: false,
        is_success: true,
      });
    for (const record of ok) expect(record.response_bytes).toBeGreaterThan(100);
    expect(records.find((r) => r.status_code === 429)).toMatchObject({ error_code: 'RATE_LIMITED', rpc_method: null });
    const stream = records.find((r) => r.rpc_method === 'message/stream');
    expect(stream).toMatchObject({ stream: true, status_code: 200, agent_server_id: server.id });
    expect(stream.response_bytes).toBeGreaterThan(300);

    // An archived integration takes its servers with it.
    expect((await admin.delete(`/v1/agent-integrations/${integration.id}`)).status).toBe(200);
    expect((await call(body)).status).toBe(404);
  });
});
