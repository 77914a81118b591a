import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { notFound } from '../../lib/errors.js';
import type { McpServerRepository, McpServerRow } from '../../storage/repositories/mcp-servers.js';
import type { UserRepository } from '../../storage/repositories/users.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { mcpPageWindow } from '../mcp-integrations/capability-schemas.js';
import { userAllowed, userOverrides } from '../tool-servers/user-access.js';
import type { ConnectionsQuery, DeleteConnectionsQuery, UserAccessBody, UserAccessQuery } from './schemas.js';

/**
 * Who may call an MCP server (its default and per-user overrides) and who has connected to it.
 * The users concerned are those who can reach the server's workspace: its members and the
 * organisation's owners and admins.
 */
export function createMcpServerAccess(deps: {
  servers: McpServerRepository;
  workspaces: WorkspaceRepository;
  users: UserRepository;
  clock: Clock;
  /** The server by id or slug, as the caller may see it (404 otherwise); `active` refuses an archived one. */
  find: (principal: Principal, ref: string, options?: { active: boolean }) => Promise<McpServerRow>;
  onChange: () => void;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const find = deps.find;

  async function reachable(row: McpServerRow, userId: string): Promise<boolean> {
    const user = await deps.users.findById(row.organisation_id, userId);
    if (!user) return false;
    if (user.role === 'owner' || user.role === 'admin') return true;
    return (await deps.workspaces.findMember(row.workspace_id, userId)) !== undefined;
  }

  /** A `workspace_id` filter must name the server's own workspace (the server lives in one). */
  async function sameWorkspace(principal: Principal, row: McpServerRow, requested: string | undefined) {
    if (requested === undefined) return;
    const workspace = await deps.workspaces.findByIdOrSlug(principal.organisationId, requested);
    if (!workspace || workspace.id !== row.workspace_id)
      throw notFound(`Workspace ${requested} (the server belongs to another)`, 'workspace_id');
  }

  return {
    async userAccess(principal: Principal, ref: string, query: UserAccessQuery) {
      const row = await find(principal, ref);
      const window = mcpPageWindow(query);
      const { total, rows } = await deps.servers.listUsers(row, window);
      return {
        object: 'list' as const,
        data: rows.map((user) => ({
          user_id: user.user_id,
          first_name: user.first_name,
          last_name: user.last_name,
          email: user.email,
          enabled: userAllowed(user.override, row.default_user_access),
          has_override: user.override !== null,
          connection_status: user.connected_at === null ? ('not_connected' as const) : ('connected' as const),
        })),
        default_user_access: row.default_user_access,
        total,
        has_more: window.offset + rows.length < total,
      };
    },

    async setUserAccess(principal: Principal, ref: string, body: UserAccessBody): Promise<McpServerRow> {
      const row = await find(principal, ref, { active: true });
      for (const [i, entry] of body.user_access.entries())
        if (!(await reachable(row, entry.user_id)))
          throw notFound(`User ${entry.user_id} (not a member of the server's workspace)`, `user_access[${i}].user_id`);
      await deps.servers.setUserAccess(row.id, {
        defaultAccess: body.default_user_access,
        users: userOverrides(body.user_access),
        stamp: now(),
      });
      deps.onChange();
      return row;
    },

    async connections(principal: Principal, ref: string, query: ConnectionsQuery) {
      const row = await find(principal, ref);
      await sameWorkspace(principal, row, query.workspace_id);
      const window = mcpPageWindow(query);
      const { total, rows } = await deps.servers.listConnections(row.id, { ...window, userId: query.user_id });
      return {
        object: 'list' as const,
        data: rows.map((c) => ({
          user_id: c.user_id,
          workspace_id: c.workspace_id,
          connected: true,
          created_at: c.created_at,
          last_updated_at: c.last_updated_at,
        })),
        total,
        has_more: window.offset + rows.length < total,
      };
    },

    async deleteConnections(principal: Principal, ref: string, query: DeleteConnectionsQuery) {
      const row = await find(principal, ref);
      await sameWorkspace(principal, row, query.workspace_id);
      await deps.servers.deleteConnections(row.id, query.user_id);
      deps.onChange();
      return row;
    },
  };
}
