import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { loadAuthSdk } from './sdk.js';
import type { Clock } from '../lib/clock.js';
import { authorizesPerUser, type McpEndpoint } from './types.js';

/** An upstream MCP server (or its authorization server) refused svcgw's credentials, or could not be asked. */
export class McpAuthError extends Error {
  override readonly name = 'McpAuthError';
}

/** How svcgw authenticates to one upstream server: headers for each request, renewed after a 401. */
export interface UpstreamAuth {
  headers(): Promise<Record<string, string>>;
  /**
   * Called after a 401 to the request sent with `sent` headers: forgets the access token,
   * renews a user's token, reads mapped secrets again; true when asking again may help.
   */
  rejected(sent: Record<string, string>): Promise<boolean>;
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
  const mapped = endpoint.mapped;
  const settingsNow = () => (mapped ? mapped.current() : Promise.resolve(endpoint.settings));
  let token: Token | null = null;
  let pending: Promise<Token> | null = null;
  let tokenUrl: string | null =
    endpoint.authType === 'oauth_client_credentials' ? (endpoint.settings.token_url ?? null) : null;

  async function discoverTokenUrl(): Promise<string> {
    try {
      const info = await (await loadAuthSdk()).discoverOAuthServerInfo(endpoint.url, { fetchFn: baseFetch });
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
    const settings = await settingsNow();
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

  /** A token request refused because of a mapped client secret read before its rotation is made again with the new one. */
  async function requestTokenWithFreshSecrets(): Promise<Token> {
    try {
      return await requestToken();
    } catch (error) {
      if (!(error instanceof McpAuthError) || !mapped || !(await mapped.refresh())) throw error;
      return requestToken();
    }
  }

  async function bearer(): Promise<string> {
    if (token && deps.clock.now() < token.expiresAt - EXPIRY_MARGIN_MS) return token.value;
    // Concurrent requests share one token request.
    pending ??= requestTokenWithFreshSecrets().finally(() => (pending = null));
    token = await pending;
    return token.value;
  }

  const user = endpoint.userToken;
  const mapsSecret = mapped?.fields.some((f) => f.targetField === 'configurations.client_secret') ?? false;
  const needsUser = !user && authorizesPerUser(endpoint.authType, endpoint.settings, mapsSecret);
  const usesOAuth = endpoint.authType === 'oauth_client_credentials' || endpoint.authType === 'oauth_auto';
  return {
    async headers() {
      if (needsUser)
        throw new McpAuthError(
          `${endpoint.url} authorizes each user (oauth_auto with the authorization-code grant): svcgw connects with a user's own authorization only, through an MCP server's endpoint.`,
        );
      const out: Record<string, string> = { ...(await settingsNow()).custom_headers };
      if (user) out.authorization = `Bearer ${await user.token()}`;
      else if (usesOAuth) out.authorization = `Bearer ${await bearer()}`;
      return out;
    },
    async rejected(sent) {
      if (user) {
        const value = /^Bearer (.+)$/.exec(sent.authorization ?? '')?.[1];
        if (value && (await user.rejected(value))) return true;
      } else if (usesOAuth && token !== null) {
        token = null;
        return true;
      }
      // Mapped headers (or a mapped client secret) rotated in their secret manager since they were read.
      return mapped ? mapped.refresh() : false;
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
    const added = await auth.headers();
    for (const [name, value] of Object.entries(added)) headers.set(name, value);
    return { response: await send(url, { ...init, headers }), added };
  };
  return async (url, init) => {
    const { response, added } = await once(url, init);
    const resendable = init?.body === undefined || init.body === null || typeof init.body === 'string';
    if (response.status !== 401 || !resendable || !(await auth.rejected(added))) return response;
    await response.body?.cancel();
    return (await once(url, init)).response;
  };
}
