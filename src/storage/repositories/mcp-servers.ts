import type { Db } from '../database.js';
import type {
  McpCapabilityType,
  McpConnectionsTable,
  McpServerCapabilitiesTable,
  McpServersTable,
  McpServerUserAccessTable,
} from '../schema.js';
import { pageOf, type PageWindow } from './paging.js';
import { nameOrSlugContains, sluggedRowLookups } from './slugged-rows.js';

export type McpServerRow = McpServersTable;
export type McpServerCapabilityRow = McpServerCapabilitiesTable;
export type McpUserAccessRow = McpServerUserAccessTable;
export type McpConnectionRow = McpConnectionsTable;

/** A server with the fields of its integration and workspace that lists show. */
export interface McpServerListRow extends McpServerRow {
  integration_slug: string;
  integration_url: string;
  integration_auth_type: string;
  workspace_name: string;
  workspace_slug: string;
}

export interface McpServerFilter extends PageWindow {
  organisationId: string;
  workspaceId?: string | undefined;
  id?: string | undefined;
  search?: string | undefined;
  status: McpServerRow['status'];
}

/** A user who can reach the server's workspace, with their override and connection. */
export interface McpUserAccessListRow {
  user_id: string;
  first_name: string | null;
  last_name: string | null;
  email: string;
  override: number | null;
  connected_at: string | null;
}

export function createMcpServerRepository(db: Db) {
  const listed = () =>
    db
      .selectFrom('mcp_servers as s')
      .innerJoin('mcp_integrations as i', 'i.id', 's.integration_id')
      .innerJoin('workspaces as w', 'w.id', 's.workspace_id');

  return {
    insert: (row: McpServerRow) => db.insertInto('mcp_servers').values(row).execute(),

    ...sluggedRowLookups(db, 'mcp_servers'),

    list: (filter: McpServerFilter) => {
      let query = listed().where('s.organisation_id', '=', filter.organisationId).where('s.status', '=', filter.status);
      if (filter.workspaceId !== undefined) query = query.where('s.workspace_id', '=', filter.workspaceId);
      if (filter.id !== undefined) query = query.where('s.id', '=', filter.id);
      const search = filter.search;
      if (search) query = query.where((eb) => nameOrSlugContains(eb, eb.ref('s.name'), eb.ref('s.slug'), search));
      return pageOf(
        query,
        (q) =>
          q
            .selectAll('s')
            .select([
              'i.slug as integration_slug',
              'i.url as integration_url',
              'i.auth_type as integration_auth_type',
              'w.name as workspace_name',
              'w.slug as workspace_slug',
            ])
            .orderBy('s.created_at', 'asc')
            .orderBy('s.id'),
        filter,
      ) as Promise<{ total: number; rows: McpServerListRow[] }>;
    },

    update: (id: string, patch: Partial<McpServerRow>) =>
      db.updateTable('mcp_servers').set(patch).where('id', '=', id).execute(),

    // ---- capability overrides ----------------------------------------------------------------

    capabilityOverrides: (serverId: string) =>
      db.selectFrom('mcp_server_capabilities').selectAll().where('server_id', '=', serverId).execute(),

    setCapabilities: (
      serverId: string,
      changes: Array<{ type: McpCapabilityType; name: string; enabled: boolean }>,
      stamp: string,
    ) =>
      db.transaction().execute(async (trx) => {
        for (const change of changes)
          await trx
            .insertInto('mcp_server_capabilities')
            .values({
              server_id: serverId,
              type: change.type,
              name: change.name,
              enabled: change.enabled ? 1 : 0,
              last_updated_at: stamp,
            })
            .onConflict((oc) =>
              oc
                .columns(['server_id', 'type', 'name'])
                .doUpdateSet({ enabled: change.enabled ? 1 : 0, last_updated_at: stamp }),
            )
            .execute();
      }),

    // ---- user access -------------------------------------------------------------------------

    /**
     * The users who can reach the server's workspace (its members, and the organisation's
     * owners and admins), with their override and connection, one page.
     */
    listUsers: (server: McpServerRow, page: PageWindow) => {
      const query = db
        .selectFrom('users as u')
        .leftJoin('mcp_server_user_access as a', (join) =>
          join.onRef('a.user_id', '=', 'u.id').on('a.server_id', '=', server.id),
        )
        .leftJoin('mcp_connections as c', (join) =>
          join.onRef('c.user_id', '=', 'u.id').on('c.server_id', '=', server.id),
        )
        .where('u.organisation_id', '=', server.organisation_id)
        .where((eb) =>
          eb.or([
            eb('u.role', 'in', ['owner', 'admin']),
            eb.exists(
              eb
                .selectFrom('workspace_members as m')
                .select('m.user_id')
                .whereRef('m.user_id', '=', 'u.id')
                .where('m.workspace_id', '=', server.workspace_id),
            ),
          ]),
        );
      return pageOf(
        query,
        (q) =>
          q
            .select([
              'u.id as user_id',
              'u.first_name',
              'u.last_name',
              'u.email',
              'a.enabled as override',
              'c.created_at as connected_at',
            ])
            .orderBy('u.created_at')
            .orderBy('u.id'),
        page,
      ) as Promise<{ total: number; rows: McpUserAccessListRow[] }>;
    },

    findUserAccess: (serverId: string, userId: string) =>
      db
        .selectFrom('mcp_server_user_access')
        .selectAll()
        .where('server_id', '=', serverId)
        .where('user_id', '=', userId)
        .executeTakeFirst(),

    /** Sets the default and the given overrides in one transaction. */
    setUserAccess: (
      serverId: string,
      change: {
        defaultAccess?: McpServerRow['default_user_access'] | undefined;
        users: Array<{ userId: string; enabled: boolean }>;
        stamp: string;
      },
    ) =>
      db.transaction().execute(async (trx) => {
        for (const user of change.users)
          await trx
            .insertInto('mcp_server_user_access')
            .values({
              server_id: serverId,
              user_id: user.userId,
              enabled: user.enabled ? 1 : 0,
              created_at: change.stamp,
              last_updated_at: change.stamp,
            })
            .onConflict((oc) =>
              oc
                .columns(['server_id', 'user_id'])
                .doUpdateSet({ enabled: user.enabled ? 1 : 0, last_updated_at: change.stamp }),
            )
            .execute();
        const patch: Partial<McpServerRow> = { last_updated_at: change.stamp };
        if (change.defaultAccess !== undefined) patch.default_user_access = change.defaultAccess;
        await trx.updateTable('mcp_servers').set(patch).where('id', '=', serverId).execute();
      }),

    // ---- connections -------------------------------------------------------------------------

    listConnections: (serverId: string, filter: PageWindow & { userId?: string | undefined }) => {
      let query = db.selectFrom('mcp_connections').where('server_id', '=', serverId);
      if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
      return pageOf(query, (q) => q.selectAll().orderBy('created_at').orderBy('user_id'), filter);
    },

    /** Records a user's connection (first initialize) or refreshes it. */
    touchConnection: (serverId: string, userId: string, workspaceId: string, stamp: string) =>
      db
        .insertInto('mcp_connections')
        .values({
          server_id: serverId,
          user_id: userId,
          workspace_id: workspaceId,
          created_at: stamp,
          last_updated_at: stamp,
        })
        .onConflict((oc) => oc.columns(['server_id', 'user_id']).doUpdateSet({ last_updated_at: stamp }))
        .execute(),

    findConnection: (serverId: string, userId: string) =>
      db
        .selectFrom('mcp_connections')
        .selectAll()
        .where('server_id', '=', serverId)
        .where('user_id', '=', userId)
        .executeTakeFirst(),

    /** Stores a user's upstream tokens (sealed by the caller), making the connection if there is none. */
    saveTokens: (
      serverId: string,
      userId: string,
      workspaceId: string,
      tokens: Pick<McpConnectionRow, 'access_token' | 'refresh_token' | 'token_expires_at' | 'token_scope'>,
      stamp: string,
    ) =>
      db
        .insertInto('mcp_connections')
        .values({
          server_id: serverId,
          user_id: userId,
          workspace_id: workspaceId,
          created_at: stamp,
          last_updated_at: stamp,
          ...tokens,
        })
        .onConflict((oc) => oc.columns(['server_id', 'user_id']).doUpdateSet({ ...tokens, last_updated_at: stamp }))
        .execute(),

    /** Drops a user's upstream tokens (the connection record stays). */
    clearTokens: (serverId: string, userId: string) =>
      db
        .updateTable('mcp_connections')
        .set({ access_token: null, refresh_token: null, token_expires_at: null, token_scope: null })
        .where('server_id', '=', serverId)
        .where('user_id', '=', userId)
        .execute(),

    /** Removes connections (of one user, or every user); returns how many. */
    deleteConnections: async (serverId: string, userId: string | undefined) => {
      let query = db.deleteFrom('mcp_connections').where('server_id', '=', serverId);
      if (userId !== undefined) query = query.where('user_id', '=', userId);
      return Number((await query.executeTakeFirst()).numDeletedRows);
    },
  };
}

export type McpServerRepository = ReturnType<typeof createMcpServerRepository>;
