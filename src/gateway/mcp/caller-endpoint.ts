import type { Principal } from '../../auth/principal.js';
import { AppError } from '../../lib/errors.js';
import type { McpServerView } from '../../mcp/directory.js';
import { authorizesPerUser, type McpEndpoint } from '../../mcp/types.js';
import { McpAuthError } from '../../mcp/upstream-auth.js';
import { McpAuthorizationRequired, type McpUserOAuth, type UserOAuthServer } from '../../mcp/user-oauth.js';
import { SecretManagerError } from '../../secrets/types.js';

/** Whether the server's integration authorizes each user (the interactive `oauth_auto`). */
export function perUser(endpoint: McpEndpoint): boolean {
  const mapsSecret = endpoint.mapped?.fields.some((f) => f.targetField === 'configurations.client_secret') ?? false;
  return authorizesPerUser(endpoint.authType, endpoint.settings, mapsSecret);
}

export const oauthServerOf = (view: McpServerView): UserOAuthServer => ({
  id: view.server.id,
  organisationId: view.server.organisation_id,
  workspaceId: view.server.workspace_id,
  endpoint: view.endpoint,
});

/** Where a user starts the authorization of one MCP server. */
export const authorizePath = (slug: string) => `/v1/mcp/${slug}/oauth/authorize`;

/**
 * The server as this caller reaches it: its mapped secrets allowed in the server's workspace and
 * readable; for per-user OAuth, the caller's own authorization (present, or renewed) and a
 * pooled connection of the caller's own. Refusals are AppErrors in the one error body, the
 * missing authorization with the URL that starts it.
 */
export async function callerView(
  deps: { oauth: McpUserOAuth },
  principal: Principal,
  view: McpServerView,
  base: string,
): Promise<McpServerView> {
  const mapped = view.endpoint.mapped;
  const forbidden = mapped?.forbiddenIn(view.server.workspace_id);
  if (forbidden) throw new AppError('SECRET_REFERENCE_FORBIDDEN', `MCP server ${view.server.slug}: ${forbidden}`);
  if (mapped) {
    try {
      await mapped.current();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (!(error instanceof SecretManagerError)) throw error;
      throw new AppError(
        'SECRET_MANAGER_ERROR',
        `Could not read a secret of MCP integration ${view.integration.slug}: ${reason}`,
      );
    }
  }
  if (!perUser(view.endpoint)) return view;
  const link = `${base}${authorizePath(view.server.slug)}`;
  if (!principal.userId)
    throw new AppError(
      'MCP_AUTHORIZATION_REQUIRED',
      `MCP server ${view.server.slug} authorizes each user at its own authorization server, and this key belongs to no user. Use a user's key (or session, or JWT); the user authorizes once at ${link}.`,
    );
  const server = oauthServerOf(view);
  try {
    await deps.oauth.accessToken(server, principal.userId);
  } catch (error) {
    if (error instanceof McpAuthorizationRequired)
      throw new AppError(
        'MCP_AUTHORIZATION_REQUIRED',
        `MCP server ${view.server.slug} needs your authorization at its authorization server: ${error.message} Open ${link} with this key (it answers the URL to open in a browser; ?redirect=true redirects there).`,
      );
    if (error instanceof McpAuthError) throw new AppError('UPSTREAM_ERROR', error.message);
    throw error;
  }
  return {
    ...view,
    endpoint: {
      ...view.endpoint,
      poolKey: `${view.endpoint.integrationId}\u0000${server.id}\u0000${principal.userId}`,
      userToken: deps.oauth.tokenSource(server, principal.userId),
    },
  };
}
