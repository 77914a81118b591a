import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import Provider from 'oidc-provider';
import { onTestFinished } from 'vitest';
import { listenOnLoopback } from './loopback-server.js';

/**
 * A real OAuth authorization server (oidc-provider) on 127.0.0.1 for MCP's per-user OAuth:
 * dynamic client registration open (RFC 7591), PKCE required, refresh tokens issued,
 * introspection for the resource server's own client. `tokenRequests` records the grant of
 * every token request it received.
 */
export async function startAuthorizationServer() {
  const server = createServer();
  const listening = await listenOnLoopback(server);
  const resourceClient = { id: 'mcp-resource-server', secret: 'mcp-resource-server-secret-0123456789' };
  const provider = new Provider(listening.url, {
    clients: [
      {
        client_id: resourceClient.id,
        client_secret: resourceClient.secret,
        redirect_uris: [],
        grant_types: [],
        response_types: [],
      },
    ],
    async findAccount(_ctx: unknown, id: string) {
      return { accountId: id, claims: async () => ({ sub: id }) };
    },
    scopes: ['openid', 'offline_access', 'tools'],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      introspection: { enabled: true },
      // MCP clients name the MCP server as the resource (RFC 8707); its tokens are opaque, checked by introspection.
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: 'tools',
          audience: resource,
          accessTokenFormat: 'opaque',
        }),
      },
    },
    issueRefreshToken: async () => true,
    cookies: { keys: ['svcgw-test-cookie-key'] },
  });
  const tokenRequests: string[] = [];
  const registrations: string[] = [];
  provider.on('grant.success', (ctx: { oidc: { params: { grant_type?: string } } }) =>
    tokenRequests.push(ctx.oidc.params.grant_type ?? ''),
  );
  provider.on('registration_create.success', (_ctx: unknown, client: { clientId: string }) =>
    registrations.push(client.clientId),
  );
  const handle = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => handle(req, res));
  onTestFinished(() => listening.close());

  /** What the authorization server says of a token (RFC 7662), as the resource server asks it. */
  async function introspect(token: string): Promise<{ active: boolean; sub?: string; client_id?: string }> {
    const response = await fetch(`${listening.url}/token/introspection`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${resourceClient.id}:${resourceClient.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token }).toString(),
    });
    return (await response.json()) as { active: boolean; sub?: string };
  }

  return { issuer: listening.url, tokenRequests, registrations, introspect };
}

/**
 * An MCP server built with the official SDK that requires a bearer token and checks it with the
 * authorization server's introspection: a `whoami` tool answers the token's subject. It
 * publishes its protected-resource metadata (RFC 9728) naming the authorization server, and
 * answers 401 with `WWW-Authenticate` to a missing, inactive or `refused` token.
 */
export async function startProtectedMcpServer(as: {
  issuer: string;
  introspect: (token: string) => Promise<{ active: boolean; sub?: string }>;
}) {
  const server = createServer();
  const listening = await listenOnLoopback(server);
  const url = `${listening.url}/mcp`;
  const seen: Array<{ token: string; sub: string }> = [];
  /** Tokens the server refuses from now on (as if revoked). */
  const refused = new Set<string>();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const path = (req.url ?? '/').split('?')[0];
      if (path?.startsWith('/.well-known/oauth-protected-resource')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ resource: url, authorization_servers: [as.issuer] }));
        return;
      }
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const introspected = token && !refused.has(token) ? await as.introspect(token) : { active: false };
      if (!token || !introspected.active || !introspected.sub) {
        res
          .writeHead(401, {
            'content-type': 'application/json',
            'www-authenticate': `Bearer resource_metadata="${listening.url}/.well-known/oauth-protected-resource/mcp"`,
          })
          .end('{"error":"invalid_token"}');
        return;
      }
      const sub = introspected.sub;
      seen.push({ token, sub });
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const mcp = new McpServer({ name: 'protected-upstream', version: '1.0.0' });
      mcp.registerTool('whoami', { description: 'Who the token belongs to' }, async () => ({
        content: [{ type: 'text' as const, text: `you are ${sub}` }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')));
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  onTestFinished(() => listening.close());
  return { url, seen, refused };
}
