import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../../src/lib/clock.js';
import { authorizedFetch, createUpstreamAuth, McpAuthError } from '../../../src/mcp/upstream-auth.js';
import type { McpEndpoint } from '../../../src/mcp/types.js';

const endpoint = (settings: McpEndpoint['settings'], authType: McpEndpoint['authType']): McpEndpoint => ({
  integrationId: 'i',
  version: 'v',
  url: 'https://mcp.example.test/mcp',
  transport: 'http',
  authType,
  settings,
});

/** A token endpoint as a fetch function: checks the client's credentials, hands out numbered tokens. */
function tokenEndpoint(expiresIn: number | undefined) {
  const requests: Array<{ authorization: string | null; form: URLSearchParams }> = [];
  const fetch = async (_url: string | URL, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    const form = new URLSearchParams(init?.body as string);
    requests.push({ authorization: headers.get('authorization'), form });
    const basic = Buffer.from('client-1:secret%3A1').toString('base64');
    const ok = headers.get('authorization') === `Basic ${basic}` || form.get('client_secret') === 'secret:1';
    if (!ok) return new Response('{"error":"invalid_client","error_description":"bad secret"}', { status: 401 });
    return Response.json({ access_token: `tok-${requests.length}`, ...(expiresIn ? { expires_in: expiresIn } : {}) });
  };
  return { fetch, requests };
}

const oauth = { client_id: 'client-1', client_secret: 'secret:1', token_url: 'https://auth.example.test/token' };

describe('upstream authentication', () => {
  it('sends custom headers, and a bearer token from the client-credentials grant, renewed before it expires', async () => {
    const clock = createManualClock(0);
    const tokens = tokenEndpoint(120);
    const auth = createUpstreamAuth(
      endpoint({ ...oauth, scope: 'tools', custom_headers: { 'X-Team': 'a' } }, 'oauth_client_credentials'),
      { clock, timeoutMs: 1000, fetch: tokens.fetch },
    );
    expect(await auth.headers()).toEqual({ 'X-Team': 'a', authorization: 'Bearer tok-1' });
    expect(tokens.requests[0]?.form.get('grant_type')).toBe('client_credentials');
    expect(tokens.requests[0]?.form.get('scope')).toBe('tools');
    clock.advance(89_000); // within 120 s less the 30 s margin
    expect((await auth.headers()).authorization).toBe('Bearer tok-1');
    clock.advance(2_000);
    expect((await auth.headers()).authorization).toBe('Bearer tok-2');
    // Concurrent requests share one token request.
    expect(await auth.rejected({})).toBe(true);
    const all = await Promise.all([auth.headers(), auth.headers(), auth.headers()]);
    expect(new Set(all.map((h) => h.authorization))).toEqual(new Set(['Bearer tok-3']));
  });

  it('sends the secret in the body with client_secret_post, and says why the grant failed without repeating it', async () => {
    const tokens = tokenEndpoint(undefined);
    const auth = createUpstreamAuth(
      endpoint({ ...oauth, token_endpoint_auth_method: 'client_secret_post' }, 'oauth_client_credentials'),
      { clock: createManualClock(0), timeoutMs: 1000, fetch: tokens.fetch },
    );
    expect((await auth.headers()).authorization).toBe('Bearer tok-1');
    expect(tokens.requests[0]?.authorization).toBeNull();

    const wrong = createUpstreamAuth(endpoint({ ...oauth, client_secret: 'nope-secret' }, 'oauth_client_credentials'), {
      clock: createManualClock(0),
      timeoutMs: 1000,
      fetch: tokens.fetch,
    });
    const error = await wrong.headers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpAuthError);
    expect((error as Error).message).toBe(
      'The token endpoint https://auth.example.test/token refused the client credentials (invalid_client: bad secret).',
    );
    expect((error as Error).message).not.toContain('nope-secret');
  });

  it('after a 401 from the server, asks for a new token and sends the request once more', async () => {
    const tokens = tokenEndpoint(3600);
    const auth = createUpstreamAuth(endpoint(oauth, 'oauth_client_credentials'), {
      clock: createManualClock(0),
      timeoutMs: 1000,
      fetch: tokens.fetch,
    });
    const seen: Array<string | null> = [];
    const server = async (_url: string | URL, init?: RequestInit) => {
      const token = new Headers(init?.headers).get('authorization');
      seen.push(token);
      return new Response(null, { status: token === 'Bearer tok-1' ? 401 : 200 });
    };
    const fetch = authorizedFetch(auth, server);
    expect((await fetch('https://mcp.example.test/mcp', { method: 'POST', body: '{}' })).status).toBe(200);
    expect(seen).toEqual(['Bearer tok-1', 'Bearer tok-2']);

    // Without OAuth there is nothing to renew: the 401 is the answer.
    const plain = authorizedFetch(
      createUpstreamAuth(endpoint({ custom_headers: { Authorization: 'Bearer fixed' } }, 'headers'), {
        clock: createManualClock(0),
        timeoutMs: 1000,
      }),
      async () => new Response(null, { status: 401 }),
    );
    expect((await plain('https://mcp.example.test/mcp', { method: 'POST', body: '{}' })).status).toBe(401);
  });
});
