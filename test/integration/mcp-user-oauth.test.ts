import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createBrowser, oidcProviderForms } from '../helpers/browser.js';
import { addUser, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startAuthorizationServer, startProtectedMcpServer } from '../helpers/mcp-oauth-peers.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

async function connect(t: TestServer, slug: string, key: string) {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/v1/mcp/${slug}/mcp`), {
    requestInit: { headers: { 'x-service-api-key': key } },
  });
  await client.connect(transport);
  onTestFinished(() => client.close());
  return client;
}

const whoami = async (client: Client) => {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  return (result.content as Array<{ text: string }>)[0]?.text;
};

describe('MCP per-user OAuth (oauth_auto: discovery, dynamic registration, authorization code with PKCE)', () => {
  it('tells a user to authorize, then uses that user’s own token; refreshes it; revoking removes it', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T10:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const orgId = t.server.bootstrap.organisationId;
    const as = await startAuthorizationServer();
    const upstream = await startProtectedMcpServer(as);

    const integration = await admin.post('/v1/mcp-integrations', {
      name: 'Protected',
      slug: 'protected',
      url: upstream.url,
      transport: 'http',
      auth_type: 'oauth_auto',
      configurations: { scope: 'openid offline_access tools' },
    });
    expect(integration.status, JSON.stringify(integration.body)).toBe(200);
    await admin.put(`/v1/mcp-integrations/protected/workspaces`, {
      workspaces: [],
      global_workspace_access: { enabled: true },
    });
    const server = await admin.post('/v1/mcp-servers', {
      name: 'Protected',
      slug: 'protected-tools',
      mcp_integration_id: 'protected',
    });
    expect(server.status, JSON.stringify(server.body)).toBe(200);

    const workspaceId = (await admin.get('/v1/workspaces/default')).body.id as string;
    const alice = await addUser(t.server.db, orgId, 'member', [{ workspaceId, role: 'member' }]);
    const bob = await addUser(t.server.db, orgId, 'member', [{ workspaceId, role: 'member' }]);
    const keyOf = async (user: string) =>
      (await createWorkspaceKey(admin, { workspace_id: 'default', user_id: user, scopes: ['mcp.invoke'] })).key;
    const aliceKey = await keyOf(alice);
    const bobKey = await keyOf(bob);
    // Without a connection: one clear error with the URL that starts the authorization.
    const refused = await fetch(`${t.baseUrl}/v1/mcp/protected-tools/mcp`, {
      method: 'POST',
      headers: {
        'x-service-api-key': aliceKey,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(403);
    const refusal = (await refused.json()) as { error: { code: string; message: string } };
    expect(refusal.error.code).toBe('MCP_AUTHORIZATION_REQUIRED');
    expect(refusal.error.message).toContain(`${t.baseUrl}/v1/mcp/protected-tools/oauth/authorize`);
    // Alice authorizes: svcgw registers itself at the authorization server, she signs in there.
    const started = await apiClient(t.baseUrl, aliceKey).get('/v1/mcp/protected-tools/oauth/authorize');
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const authorizationUrl = new URL(started.body.authorization_url as string);
    expect(authorizationUrl.origin).toBe(as.issuer);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(`${t.baseUrl}/v1/mcp/oauth/callback`);
    expect(as.registrations).toHaveLength(1);
    const browser = createBrowser();
    const callback = await browser.follow(
      authorizationUrl,
      (url) => url.pathname === '/v1/mcp/oauth/callback',
      oidcProviderForms('alice-at-idp'),
    );
    const landed = await fetch(callback);
    expect(landed.status, `${callback.search} ${await landed.clone().text()}`).toBe(200);
    expect(await landed.text()).toContain('now authorized');
    expect(as.tokenRequests).toEqual(['authorization_code']);

    // Tools list and call with Alice's own token: the upstream sees her identity.
    const aliceClient = await connect(t, 'protected-tools', aliceKey);
    expect((await aliceClient.listTools()).tools.map((tool) => tool.name)).toEqual(['whoami']);
    expect(await whoami(aliceClient)).toBe('you are alice-at-idp');
    expect(new Set(upstream.seen.map((s) => s.sub))).toEqual(new Set(['alice-at-idp']));

    // Bob does not get Alice's token.
    const bobList = await apiClient(t.baseUrl, bobKey).get('/v1/mcp/protected-tools/oauth/connection');
    expect(bobList.body).toMatchObject({ connected: false });
    await expect(connect(t, 'protected-tools', bobKey)).rejects.toMatchObject({ code: 403 });

    // Her token expires (svcgw's clock): the next call renews it with the refresh token.
    const firstToken = upstream.seen.at(-1)!.token;
    clock.advance(2 * 3600_000);
    expect(await whoami(aliceClient)).toBe('you are alice-at-idp');
    expect(as.tokenRequests).toEqual(['authorization_code', 'refresh_token']);
    const secondToken = upstream.seen.at(-1)!.token;
    expect(secondToken).not.toBe(firstToken);

    // The upstream refuses the current token (revoked there): svcgw renews it once and retries.
    upstream.refused.add(secondToken);
    expect(await whoami(aliceClient)).toBe('you are alice-at-idp');
    expect(as.tokenRequests).toEqual(['authorization_code', 'refresh_token', 'refresh_token']);

    // She sees her connection; the admin's list shows it; tokens never appear.
    const mine = await apiClient(t.baseUrl, aliceKey).get('/v1/mcp/protected-tools/oauth/connection');
    expect(mine.body).toMatchObject({ connected: true, user_id: alice });
    const listed = await admin.get(`/v1/mcp-servers/protected-tools/connections`);
    expect(listed.body.data).toEqual([expect.objectContaining({ user_id: alice, connected: true })]);
    expect(JSON.stringify(listed.body)).not.toContain(secondToken.slice(0, 12));

    // Revoking removes it: the next call is told to authorize again.
    const revoked = await apiClient(t.baseUrl, aliceKey).delete('/v1/mcp/protected-tools/oauth/connection');
    expect(revoked.status).toBe(200);
    expect((await apiClient(t.baseUrl, aliceKey).get('/v1/mcp/protected-tools/oauth/connection')).body).toMatchObject({
      connected: false,
    });
    await expect(connect(t, 'protected-tools', aliceKey)).rejects.toMatchObject({ code: 403 });

    // The sealed rows hold no token in clear.
    const rows = await t.server.db.selectFrom('mcp_oauth_clients').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.client_information).not.toContain('client_secret');
  });

  it('refuses a callback whose state svcgw did not make', async () => {
    const t = await startTestServer();
    const answer = await fetch(`${t.baseUrl}/v1/mcp/oauth/callback?code=abc&state=forged`);
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { param: string } }).error.param).toBe('state');
  });
});
