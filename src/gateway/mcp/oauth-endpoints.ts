import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import type { McpDirectory } from '../../mcp/directory.js';
import { McpAuthError } from '../../mcp/upstream-auth.js';
import { McpAuthorizationStateError, type McpUserOAuth } from '../../mcp/user-oauth.js';
import type { McpServerRepository } from '../../storage/repositories/mcp-servers.js';
import { authorizePath, oauthServerOf, perUser } from './caller-endpoint.js';
import { createMcpServerResolver } from './mcp-gateway.js';

/** The path the authorization server sends the browser back to (one for every MCP server). */
export const CALLBACK_PATH = '/v1/mcp/oauth/callback';

export interface McpOAuthEndpointDeps {
  directory: McpDirectory;
  oauth: McpUserOAuth;
  servers: Pick<McpServerRepository, 'findConnection' | 'deleteConnections'>;
  clock: Clock;
  publicUrl?: string | undefined;
  /** A user's connection went: drop the pooled upstream connections made with it. */
  onRevoked: (integrationId: string) => void;
}

/** The address of the request as the caller used it (or public_url). */
export interface CallerAddress {
  protocol: string;
  host: string;
}

const notPerUser = (slug: string) =>
  new AppError(
    'INVALID_REQUEST',
    `MCP server ${slug} does not authorize each user (its integration's auth_type is not oauth_auto with the authorization-code grant); there is nothing to authorize.`,
  );

/**
 * The per-user OAuth steps of MCP servers (docs/mcp.md, "Per-user authorization"): a signed-in
 * user starts the authorization of one server, the authorization server sends the browser
 * back to the callback, and the user can see and revoke their own connection.
 */
export function createMcpOAuthEndpoints(deps: McpOAuthEndpointDeps) {
  const resolve = createMcpServerResolver(deps);
  const baseOf = (address: CallerAddress) =>
    deps.publicUrl?.replace(/\/+$/, '') ?? `${address.protocol}://${address.host}`;

  async function userServer(principal: Principal, ref: string) {
    const view = await resolve(principal, ref);
    if (!perUser(view.endpoint)) throw notPerUser(view.server.slug);
    if (!principal.userId)
      throw new AppError(
        'MCP_AUTHORIZATION_REQUIRED',
        `This key belongs to no user; MCP server ${view.server.slug} is authorized by each user with their own key, session or JWT.`,
      );
    return { view, userId: principal.userId };
  }

  const upstreamFailure = (error: unknown): never => {
    if (error instanceof McpAuthError) throw new AppError('UPSTREAM_ERROR', error.message);
    throw error;
  };

  return {
    /** The URL where the user authorizes svcgw at the server's authorization server. */
    async authorize(principal: Principal, ref: string, address: CallerAddress) {
      const { view, userId } = await userServer(principal, ref);
      const url = await deps.oauth
        .start(oauthServerOf(view), userId, `${baseOf(address)}${CALLBACK_PATH}`)
        .catch(upstreamFailure);
      return {
        object: 'mcp-authorization' as const,
        mcp_server_id: view.server.id,
        authorization_url: url.href,
        expires_in: 600,
      };
    },

    /** The caller's own connection: whether svcgw holds their authorization, and where to give it. */
    async connection(principal: Principal, ref: string, address: CallerAddress) {
      const { view, userId } = await userServer(principal, ref);
      const row = await deps.servers.findConnection(view.server.id, userId);
      return {
        object: 'mcp-connection' as const,
        mcp_server_id: view.server.id,
        user_id: userId,
        connected: Boolean(row?.access_token),
        scope: row?.access_token ? row.token_scope : null,
        created_at: row?.created_at ?? null,
        last_updated_at: row?.last_updated_at ?? null,
        authorize_url: `${baseOf(address)}${authorizePath(view.server.slug)}`,
      };
    },

    /** Forgets the caller's connection and tokens; the next call needs a new authorization. */
    async revoke(principal: Principal, ref: string) {
      const { view, userId } = await userServer(principal, ref);
      await deps.servers.deleteConnections(view.server.id, userId);
      deps.onRevoked(view.integration.id);
      return { success: true as const, view };
    },

    /** The authorization server's answer: the code exchanged and the user's tokens stored. */
    async callback(query: { code?: string; state?: string; error?: string; error_description?: string }) {
      if (!query.state)
        throw new AppError('INVALID_REQUEST', 'The callback has no state parameter.', { param: 'state' });
      let who;
      try {
        who = deps.oauth.readState(query.state);
      } catch (error) {
        if (error instanceof McpAuthorizationStateError)
          throw new AppError('INVALID_REQUEST', error.message, { param: 'state' });
        throw error;
      }
      if (query.error)
        throw new AppError(
          'INVALID_REQUEST',
          `The authorization server did not authorize svcgw: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}.`,
          { param: 'error' },
        );
      if (!query.code) throw new AppError('INVALID_REQUEST', 'The callback has no code parameter.', { param: 'code' });
      const view = await deps.directory.find(who.organisationId, who.serverId);
      if (!view || !perUser(view.endpoint))
        throw new AppError(
          'NOT_FOUND',
          'The MCP server of this authorization is gone (or no longer authorizes each user).',
        );
      await deps.oauth.complete(oauthServerOf(view), query.state, query.code).catch(upstreamFailure);
      return { server: view.server, userId: who.userId };
    },
  };
}

export type McpOAuthEndpoints = ReturnType<typeof createMcpOAuthEndpoints>;
