import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { onTestFinished } from 'vitest';
import { z } from 'zod';
import { listenOnLoopback } from './loopback-server.js';

/** What the upstream serves; tests change it between calls (the "server changes"). */
export interface UpstreamCatalogue {
  name: string;
  version: string;
  /** Tools added to the built-in ones. */
  tools: string[];
  /** Built-in tools the server leaves out. */
  without: string[];
}

export interface McpUpstream {
  /** The MCP endpoint: `/mcp` (Streamable HTTP) or `/sse` (SSE). */
  url: string;
  catalogue: UpstreamCatalogue;
  /** Every request the server received, in order. */
  received: Array<{ method: string; path: string; headers: IncomingHttpHeaders }>;
  /** Arguments of every tool call the server ran. */
  calls: Array<{ tool: string; args: Record<string, unknown> }>;
  /** Registers a tool on every live SSE connection (they send tools/list_changed). */
  addLiveTool(name: string): void;
  /** SSE event streams open now. */
  openStreams(): number;
  /** Streamable HTTP with sessions: forgets every session (their requests then get 404). */
  expireSessions(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An MCP server built with the official SDK, on 127.0.0.1: tools (echo, add, shout, fail and
 * whatever `catalogue.tools` adds), a prompt, a resource and a resource template. Over
 * Streamable HTTP it runs without sessions (a fresh McpServer per request, from the catalogue
 * as it is then); over SSE each connection gets its own McpServer. `authorize` decides from a
 * request's headers whether it may in (401 otherwise).
 */
export async function startMcpUpstream(
  options: {
    transport?: 'http' | 'sse';
    name?: string;
    authorize?: (headers: IncomingHttpHeaders) => boolean;
    /** Publishes OAuth protected-resource metadata (RFC 9728) naming this authorization server. */
    authorizationServer?: string;
    /** Streamable HTTP with sessions (Mcp-Session-Id) instead of a fresh server per request. */
    sessions?: boolean;
  } = {},
): Promise<McpUpstream> {
  const transport = options.transport ?? 'http';
  const catalogue: UpstreamCatalogue = {
    name: options.name ?? 'test-upstream',
    version: '1.0.0',
    tools: [],
    without: [],
  };
  const received: McpUpstream['received'] = [];
  const calls: McpUpstream['calls'] = [];
  const live = new Map<string, { transport: SSEServerTransport; server: McpServer }>();
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();

  function build(): McpServer {
    const server = new McpServer(
      { name: catalogue.name, version: catalogue.version, title: 'Test upstream' },
      { instructions: 'Use echo to repeat things.' },
    );
    const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
    server.registerTool(
      'echo',
      { title: 'Echo', description: 'Repeats the text', inputSchema: { text: z.string() } },
      async ({ text: value }) => {
        calls.push({ tool: 'echo', args: { text: value } });
        return text(`echo: ${value}`);
      },
    );
    server.registerTool(
      'add',
      { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => {
        calls.push({ tool: 'add', args: { a, b } });
        return text(String(a + b));
      },
    );
    server.registerTool(
      'shout',
      { description: 'Upper-cases the text', inputSchema: { text: z.string() } },
      async ({ text: value }) => {
        calls.push({ tool: 'shout', args: { text: value } });
        return text(value.toUpperCase());
      },
    );
    server.registerTool(
      'count',
      { description: 'Counts to n, telling its progress', inputSchema: { n: z.number() } },
      async ({ n }, extra) => {
        calls.push({ tool: 'count', args: { n } });
        const token = extra._meta?.progressToken;
        for (let i = 1; i <= n; i++)
          if (token !== undefined)
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: i, total: n },
            });
        return text(`counted to ${n}`);
      },
    );
    if (!catalogue.without.includes('fail'))
      server.registerTool('fail', { description: 'Always fails' }, async () => {
        calls.push({ tool: 'fail', args: {} });
        return { ...text('it broke'), isError: true };
      });
    for (const name of catalogue.tools)
      server.registerTool(name, { description: `Added tool ${name}` }, async () => {
        calls.push({ tool: name, args: {} });
        return text(name);
      });
    server.registerPrompt('greet', { description: 'A greeting', argsSchema: { who: z.string() } }, ({ who }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${who}` } }],
    }));
    server.registerPrompt('secret-prompt', { description: 'Not for everyone' }, () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'secret' } }],
    }));
    server.registerResource('readme', 'docs://readme', { mimeType: 'text/plain' }, async (uri) => ({
      contents: [{ uri: uri.href, text: 'the readme' }],
    }));
    server.registerResource(
      'file',
      new ResourceTemplate('files://{name}', { list: undefined }),
      { mimeType: 'text/plain' },
      async (uri, { name }) => ({ contents: [{ uri: uri.href, text: `file ${String(name)}` }] }),
    );
    return server;
  }

  const readBody = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    return raw ? (JSON.parse(raw) as unknown) : undefined;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    received.push({ method: req.method ?? '', path, headers: req.headers });
    if (options.authorizationServer && path.startsWith('/.well-known/oauth-protected-resource')) {
      const address = `http://${req.headers.host}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          resource: `${address}${transport === 'sse' ? '/sse' : '/mcp'}`,
          authorization_servers: [options.authorizationServer],
        }),
      );
      return;
    }
    if (options.authorize && !options.authorize(req.headers)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    if (transport === 'http' && path === '/mcp' && options.sessions) {
      const id = req.headers['mcp-session-id'];
      if (typeof id === 'string') {
        const found = sessions.get(id);
        if (!found) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"unknown session"}');
          return;
        }
        await found.transport.handleRequest(req, res, req.method === 'POST' ? await readBody(req) : undefined);
        return;
      }
      const server = build();
      const http: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, { transport: http, server }),
      });
      await server.connect(http);
      await http.handleRequest(req, res, await readBody(req));
      return;
    }
    if (transport === 'http' && path === '/mcp') {
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST' }).end();
        return;
      }
      const server = build();
      const http = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void http.close();
        void server.close();
      });
      await server.connect(http);
      await http.handleRequest(req, res, await readBody(req));
      return;
    }
    if (transport === 'sse' && path === '/sse' && req.method === 'GET') {
      const sse = new SSEServerTransport('/messages', res);
      const server = build();
      live.set(sse.sessionId, { transport: sse, server });
      res.on('close', () => live.delete(sse.sessionId));
      await server.connect(sse);
      return;
    }
    if (transport === 'sse' && path === '/messages' && req.method === 'POST') {
      const id = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
      const found = live.get(id);
      if (!found) {
        res.writeHead(404).end('no such session');
        return;
      }
      await found.transport.handlePostMessage(req, res, await readBody(req));
      return;
    }
    res.writeHead(404).end();
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  const loop = await listenOnLoopback(http);
  const expireSessions = async () => {
    const all = [...sessions.values()];
    sessions.clear();
    for (const { server } of all) await server.close().catch(() => {});
  };
  const close = async () => {
    await expireSessions();
    for (const { server } of live.values()) await server.close().catch(() => {});
    await loop.close();
  };
  onTestFinished(close);
  return {
    url: `${loop.url}${transport === 'sse' ? '/sse' : '/mcp'}`,
    catalogue,
    received,
    calls,
    addLiveTool(name) {
      catalogue.tools.push(name);
      for (const { server } of live.values())
        server.registerTool(name, { description: `Added tool ${name}` }, async () => ({
          content: [{ type: 'text', text: name }],
        }));
    },
    openStreams: () => live.size,
    expireSessions,
    close,
  };
}

/** A token endpoint (client-credentials grant) that checks the client's id and secret; counts the tokens it issued. */
export async function startTokenEndpoint(client: { id: string; secret: string }) {
  const issued: string[] = [];
  const http = createServer((req, res) => {
    if (req.url === '/.well-known/oauth-authorization-server') {
      const issuer = `http://${req.headers.host}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/oauth/authorize`,
          token_endpoint: `${issuer}/oauth/token`,
          response_types_supported: ['code'],
          grant_types_supported: ['client_credentials'],
        }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const [id, secret] = basic
        ? Buffer.from(basic, 'base64')
            .toString('utf8')
            .split(':')
            .map((part) => decodeURIComponent(part))
        : [form.get('client_id'), form.get('client_secret')];
      if (form.get('grant_type') !== 'client_credentials' || id !== client.id || secret !== client.secret) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
        return;
      }
      const token = `tok-${issued.length + 1}`;
      issued.push(token);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
    });
  });
  const loop = await listenOnLoopback(http);
  onTestFinished(() => loop.close());
  return { url: `${loop.url}/oauth/token`, base: loop.url, issued, close: () => loop.close() };
}
