import type { discoverOAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { loadAuthSdk } from './sdk.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { McpIntegrationRepository } from '../storage/repositories/mcp-integrations.js';
import type { McpServerRepository } from '../storage/repositories/mcp-servers.js';
import type { McpEndpoint, UserTokenSource } from './types.js';
import { McpAuthError } from './upstream-auth.js';

/** The user has no upstream authorization for the MCP server (or it ran out and cannot be renewed). */
export class McpAuthorizationRequired extends Error {
  override readonly name = 'McpAuthorizationRequired';
}

/** The callback's state is not one svcgw made, or is too old. */
export class McpAuthorizationStateError extends Error {
  override readonly name = 'McpAuthorizationStateError';
}

/** What the flow needs of one MCP server. */
export interface UserOAuthServer {
  id: string;
  organisationId: string;
  workspaceId: string;
  endpoint: McpEndpoint;
}

/** Sealed into the `state` parameter: the flow keeps nothing on the server between its two steps. */
interface FlowState {
  o: string;
  s: string;
  u: string;
  v: string;
  r: string;
  e: number;
}

/** How long a user has to finish an authorization in the browser. */
export const AUTHORIZATION_TTL_MS = 10 * 60_000;
/** Tokens are renewed this long before they expire. */
const EXPIRY_MARGIN_MS = 30_000;
/** Discovery answers are used this long (per integration version). */
const DISCOVERY_TTL_MS = 5 * 60_000;

type ServerInfo = Awaited<ReturnType<typeof discoverOAuthServerInfo>>;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * svcgw as the OAuth client of upstream MCP servers that authorize each user (`oauth_auto`
 * with the authorization-code grant): MCP's discovery (RFC 9728, then RFC 8414 / OpenID
 * metadata), dynamic client registration (RFC 7591) when no client_id is configured, the
 * authorization code with PKCE, and each user's tokens per MCP server, sealed at rest and
 * renewed with the refresh token. The OAuth messages are the official MCP SDK's.
 */
export function createMcpUserOAuth(deps: {
  servers: Pick<McpServerRepository, 'findConnection' | 'saveTokens' | 'clearTokens'>;
  integrations: Pick<McpIntegrationRepository, 'findOAuthClient' | 'saveOAuthClient'>;
  secretBox: SecretBox;
  clock: Clock;
  timeoutMs: number;
  fetch?: FetchLike;
}) {
  const base: FetchLike = deps.fetch ?? ((url, init) => fetch(url, init));
  const fetchFn: FetchLike = (url, init) => base(url, { ...init, signal: AbortSignal.timeout(deps.timeoutMs) });
  const discovered = new Map<string, { at: number; info: Promise<ServerInfo> }>();
  const refreshing = new Map<string, Promise<string>>();
  const seal = (text: string) => deps.secretBox.encrypt(text);
  const open = (text: string) => deps.secretBox.decrypt(text);

  function serverInfo(endpoint: McpEndpoint): Promise<ServerInfo> {
    const key = `${endpoint.integrationId}:${endpoint.version}`;
    const hit = discovered.get(key);
    if (hit && deps.clock.now() - hit.at < DISCOVERY_TTL_MS) return hit.info;
    const info = loadAuthSdk()
      .then((sdk) => sdk.discoverOAuthServerInfo(endpoint.url, { fetchFn }))
      .catch((error: unknown) => {
        discovered.delete(key);
        throw new McpAuthError(`OAuth discovery for ${endpoint.url} failed: ${messageOf(error)}`);
      });
    discovered.set(key, { at: deps.clock.now(), info });
    return info;
  }

  const resourceOf = (info: ServerInfo) =>
    info.resourceMetadata?.resource ? new URL(info.resourceMetadata.resource) : undefined;

  /** The configured client, else svcgw's registration (made once per authorization server and callback URL). */
  async function clientFor(endpoint: McpEndpoint, info: ServerInfo, redirectUri: string) {
    const settings = endpoint.mapped ? await endpoint.mapped.current() : endpoint.settings;
    if (settings.client_id)
      return {
        client_id: settings.client_id,
        ...(settings.client_secret ? { client_secret: settings.client_secret } : {}),
      } satisfies OAuthClientInformationMixed;
    const issuer = String(info.authorizationServerUrl);
    const stored = await deps.integrations.findOAuthClient(endpoint.integrationId);
    if (stored && stored.issuer === issuer && stored.redirect_uri === redirectUri)
      return JSON.parse(open(stored.client_information)) as OAuthClientInformationMixed;
    let registered: OAuthClientInformationMixed;
    try {
      registered = await (
        await loadAuthSdk()
      ).registerClient(info.authorizationServerUrl, {
        ...(info.authorizationServerMetadata ? { metadata: info.authorizationServerMetadata } : {}),
        clientMetadata: {
          client_name: 'svcgw',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
          ...(settings.scope ? { scope: settings.scope } : {}),
        },
        fetchFn,
      });
    } catch (error) {
      throw new McpAuthError(
        `Dynamic client registration at ${issuer} failed (${messageOf(error)}); configure client_id (and client_secret) of a client registered there instead.`,
      );
    }
    await deps.integrations.saveOAuthClient({
      integration_id: endpoint.integrationId,
      issuer,
      redirect_uri: redirectUri,
      client_information: seal(JSON.stringify(registered)),
      created_at: new Date(deps.clock.now()).toISOString(),
    });
    return registered;
  }

  async function store(server: UserOAuthServer, userId: string, tokens: OAuthTokens): Promise<string> {
    await deps.servers.saveTokens(
      server.id,
      userId,
      server.workspaceId,
      {
        access_token: seal(tokens.access_token),
        refresh_token: tokens.refresh_token ? seal(tokens.refresh_token) : null,
        token_expires_at: tokens.expires_in ? deps.clock.now() + tokens.expires_in * 1000 : null,
        token_scope: tokens.scope ?? null,
      },
      new Date(deps.clock.now()).toISOString(),
    );
    return tokens.access_token;
  }

  /** A new access token from the refresh token; the user must authorize again when there is none or it is refused. */
  function refresh(server: UserOAuthServer, userId: string): Promise<string> {
    const key = `${server.id}:${userId}`;
    const running = refreshing.get(key);
    if (running) return running;
    const work = (async () => {
      const row = await deps.servers.findConnection(server.id, userId);
      if (!row?.refresh_token) {
        await deps.servers.clearTokens(server.id, userId);
        throw new McpAuthorizationRequired('The authorization ran out and cannot be renewed (no refresh token).');
      }
      const info = await serverInfo(server.endpoint);
      const stored = await deps.integrations.findOAuthClient(server.endpoint.integrationId);
      const clientInformation = await clientFor(server.endpoint, info, stored?.redirect_uri ?? '');
      let tokens: OAuthTokens;
      try {
        tokens = await (
          await loadAuthSdk()
        ).refreshAuthorization(info.authorizationServerUrl, {
          ...(info.authorizationServerMetadata ? { metadata: info.authorizationServerMetadata } : {}),
          clientInformation,
          refreshToken: open(row.refresh_token),
          ...(resourceOf(info) ? { resource: resourceOf(info)! } : {}),
          fetchFn,
        });
      } catch (error) {
        // A refused refresh token (invalid_grant, a revoked grant) will not work later either.
        await deps.servers.clearTokens(server.id, userId);
        throw new McpAuthorizationRequired(`The authorization server refused to renew the token: ${messageOf(error)}`);
      }
      return store(server, userId, { ...tokens, refresh_token: tokens.refresh_token ?? open(row.refresh_token) });
    })().finally(() => refreshing.delete(key));
    refreshing.set(key, work);
    return work;
  }

  async function accessToken(server: UserOAuthServer, userId: string): Promise<string> {
    const row = await deps.servers.findConnection(server.id, userId);
    if (!row?.access_token) throw new McpAuthorizationRequired('The user has not authorized svcgw at this MCP server.');
    if (row.token_expires_at !== null && deps.clock.now() >= row.token_expires_at - EXPIRY_MARGIN_MS)
      return refresh(server, userId);
    return open(row.access_token);
  }

  return {
    /** The authorization URL to send the user to (PKCE; the verifier travels sealed in `state`). */
    async start(server: UserOAuthServer, userId: string, redirectUri: string): Promise<URL> {
      const info = await serverInfo(server.endpoint);
      const clientInformation = await clientFor(server.endpoint, info, redirectUri);
      const settings = server.endpoint.mapped ? await server.endpoint.mapped.current() : server.endpoint.settings;
      const resource = resourceOf(info);
      const { authorizationUrl, codeVerifier } = await (
        await loadAuthSdk()
      ).startAuthorization(info.authorizationServerUrl, {
        ...(info.authorizationServerMetadata ? { metadata: info.authorizationServerMetadata } : {}),
        clientInformation,
        redirectUrl: redirectUri,
        ...(settings.scope ? { scope: settings.scope } : {}),
        ...(resource ? { resource } : {}),
      });
      const state: FlowState = {
        o: server.organisationId,
        s: server.id,
        u: userId,
        v: codeVerifier,
        r: redirectUri,
        e: deps.clock.now() + AUTHORIZATION_TTL_MS,
      };
      authorizationUrl.searchParams.set('state', Buffer.from(seal(JSON.stringify(state))).toString('base64url'));
      return authorizationUrl;
    },

    /** Who a callback's state was made for; McpAuthorizationStateError when it is not svcgw's or too old. */
    readState(state: string): { organisationId: string; serverId: string; userId: string } {
      let parsed: FlowState;
      try {
        parsed = JSON.parse(open(Buffer.from(state, 'base64url').toString('utf8'))) as FlowState;
      } catch {
        throw new McpAuthorizationStateError('The state parameter is not one svcgw made.');
      }
      if (deps.clock.now() > parsed.e)
        throw new McpAuthorizationStateError('The authorization took too long (10 minutes); start it again.');
      return { organisationId: parsed.o, serverId: parsed.s, userId: parsed.u };
    },

    /** The callback's code exchanged (with the PKCE verifier) and the user's tokens stored. */
    async complete(server: UserOAuthServer, state: string, code: string): Promise<void> {
      const parsed = JSON.parse(open(Buffer.from(state, 'base64url').toString('utf8'))) as FlowState;
      const info = await serverInfo(server.endpoint);
      const clientInformation = await clientFor(server.endpoint, info, parsed.r);
      const resource = resourceOf(info);
      let tokens: OAuthTokens;
      try {
        tokens = await (
          await loadAuthSdk()
        ).exchangeAuthorization(info.authorizationServerUrl, {
          ...(info.authorizationServerMetadata ? { metadata: info.authorizationServerMetadata } : {}),
          clientInformation,
          authorizationCode: code,
          codeVerifier: parsed.v,
          redirectUri: parsed.r,
          ...(resource ? { resource } : {}),
          fetchFn,
        });
      } catch (error) {
        throw new McpAuthError(`The authorization server refused the code: ${messageOf(error)}`);
      }
      await store(server, parsed.u, tokens);
    },

    accessToken,

    /** The token source the upstream connection of one user uses. */
    tokenSource(server: UserOAuthServer, userId: string): UserTokenSource {
      return {
        token: () => accessToken(server, userId),
        async rejected(sent) {
          const row = await deps.servers.findConnection(server.id, userId);
          if (!row?.access_token) return false;
          // Another request renewed it since this one was sent.
          if (open(row.access_token) !== sent) return true;
          try {
            await refresh(server, userId);
            return true;
          } catch {
            return false;
          }
        },
      };
    },
  };
}

export type McpUserOAuth = ReturnType<typeof createMcpUserOAuth>;
