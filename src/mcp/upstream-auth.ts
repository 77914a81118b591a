import { discoverOAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Clock } from '../lib/clock.js';
import type { McpEndpoint } from './types.js';

/** An upstream MCP server (or its authorization server) refused svcgw's credentials, or could not be asked. */
export class McpAuthError extends Error {
  override readonly name = 'McpAuthError';
}

/** How svcgw authenticates to one upstream server: headers for each request, renewed after a 401. */
export interface UpstreamAuth {
  headers(): Promise<Record<string, string>>;
  /** Called after a 401: forgets the access token; true when asking again may help. */
  rejected(): boolean;
}

interface Token {
  value: string;
  expiresAt: number;
}

/** Tokens are renewed this long before they expire, so that none expires in flight. */
const EXPIRY_MARGIN_MS = 30_000;
/** A token answer without expires_in is kept this long. */
const DEFAULT_TOKEN_TTL_MS = 5 * 60_000;

/**
 * The authentication of an endpoint: custom headers always; with `oauth_client_credentials`
 * a bearer token from the client-credentials grant at the configured `token_url`; with
 * `oauth_auto` the same grant at the token endpoint found by MCP's discovery (protected
 * resource metadata, then the authorization server's metadata). Tokens are cached until
 * shortly before they expire, on the clock given.
 */
export function createUpstreamAuth(
  endpoint: McpEndpoint,
  deps: { clock: Clock; timeoutMs: number; fetch?: FetchLike },
): UpstreamAuth {
  const baseFetch: FetchLike = deps.fetch ?? ((url, init) => fetch(url, init));
  const settings = endpoint.settings;
  const custom = settings.custom_headers ?? {};
  let token: Token | null = null;
  let pending: Promise<Token> | null = null;
  let tokenUrl: string | null = endpoint.authType === 'oauth_client_credentials' ? (settings.token_url ?? null) : null;

  async function discoverTokenUrl(): Promise<string> {
    try {
      const info = await discoverOAuthServerInfo(endpoint.url, { fetchFn: baseFetch });
      const found = info.authorizationServerMetadata?.token_endpoint;
      if (!found) throw new Error('the authorization server publishes no token_endpoint');
      return found;
    } catch (error) {
      throw new McpAuthError(
        `OAuth discovery for ${endpoint.url} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  async function requestToken(): Promise<Token> {
    tokenUrl ??= await discoverTokenUrl();
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (settings.scope) form.set('scope', settings.scope);
    if (settings.audience) form.set('audience', settings.audience);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    const id = settings.client_id ?? '';
    const secret = settings.client_secret ?? '';
    if (settings.token_endpoint_auth_method === 'client_secret_post') {
      form.set('client_id', id);
      form.set('client_secret', secret);
    } else {
      // RFC 6749 §2.3.1: both parts form-encoded before they are joined.
      const basic = Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');
      headers.authorization = `Basic ${basic}`;
    }
    let response: Response;
    try {
      response = await baseFetch(tokenUrl, {
        method: 'POST',
        headers,
        body: form.toString(),
        // The credentials go to the configured endpoint only, never on to where it redirects.
        redirect: 'error',
        signal: AbortSignal.timeout(deps.timeoutMs),
      });
    } catch (error) {
      throw new McpAuthError(
        `The token endpoint ${tokenUrl} could not be reached: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const text = await response.text();
    let body: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // not JSON: reported below
    }
    if (!response.ok || typeof body.access_token !== 'string') {
      const reason = typeof body.error === 'string' ? body.error : `HTTP ${response.status}`;
      const detail = typeof body.error_description === 'string' ? `: ${body.error_description}` : '';
      throw new McpAuthError(`The token endpoint ${tokenUrl} refused the client credentials (${reason}${detail}).`);
    }
    const ttl =
      typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : DEFAULT_TOKEN_TTL_MS;
    return { value: body.access_token, expiresAt: deps.clock.now() + ttl };
  }

  async function bearer(): Promise<string> {
    if (token && deps.clock.now() < token.expiresAt - EXPIRY_MARGIN_MS) return token.value;
    // Concurrent requests share one token request.
    pending ??= requestToken().finally(() => (pending = null));
    token = await pending;
    return token.value;
  }

  const usesOAuth = endpoint.authType === 'oauth_client_credentials' || endpoint.authType === 'oauth_auto';
  return {
    async headers() {
      const out: Record<string, string> = { ...custom };
      if (usesOAuth) out.authorization = `Bearer ${await bearer()}`;
      return out;
    },
    rejected() {
      if (!usesOAuth || token === null) return false;
      token = null;
      return true;
    },
  };
}

/**
 * A fetch for the MCP transports that adds the endpoint's headers to every request and, after
 * a 401, renews the token and sends the request once more (the transports send JSON text,
 * which can be sent again).
 */
export function authorizedFetch(auth: UpstreamAuth, base?: FetchLike): FetchLike {
  const send: FetchLike = base ?? ((url, init) => fetch(url, init));
  const once = async (url: string | URL, init: RequestInit | undefined) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(await auth.headers())) headers.set(name, value);
    return send(url, { ...init, headers });
  };
  return async (url, init) => {
    const response = await once(url, init);
    const resendable = init?.body === undefined || init.body === null || typeof init.body === 'string';
    if (response.status !== 401 || !resendable || !auth.rejected()) return response;
    await response.body?.cancel();
    return once(url, init);
  };
}
