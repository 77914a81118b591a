import type { Db } from '../database.js';
import type { AgentServersTable } from '../schema.js';
import { pageOf, type PageWindow } from './paging.js';
import { nameOrSlugContains, sluggedRowLookups } from './slugged-rows.js';

export type AgentServerRow = AgentServersTable;

/** A server with the names of its workspace and integration, as lists show it. */
export type AgentServerListRow = AgentServerRow & {
  workspace_slug: string;
  workspace_name: string;
  integration_slug: string;
  integration_name: string;
  integration_url: string;
  integration_auth_type: string;
};

export interface AgentServerFilter extends PageWindow {
  organisationId: string;
  workspaceId?: string | undefined;
  integrationId?: string | undefined;
  status?: AgentServerRow['status'] | undefined;
  search?: string | undefined;
}

export interface UserAccessRow {
  user_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  /** The user's override, or null when the server's default applies. */
  enabled: number | null;
}

/** SQL of agent servers, their skill switches and their user access. */
export function createAgentServerRepository(db: Db) {
  const joined = () =>
    db
      .selectFrom('agent_servers as s')
      .innerJoin('workspaces as w', 'w.id', 's.workspace_id')
      .innerJoin('agent_integrations as i', 'i.id', 's.integration_id');
  const listColumns = [
    'w.slug as workspace_slug',
    'w.name as workspace_name',
    'i.slug as integration_slug',
    'i.name as integration_name',
    'i.url as integration_url',
    'i.auth_type as integration_auth_type',
  ] as const;

  return {
    insert: (row: AgentServerRow) => db.insertInto('agent_servers').values(row).execute(),

    ...sluggedRowLookups(db, 'agent_servers'),

    findListed: (id: string): Promise<AgentServerListRow | undefined> =>
      joined().selectAll('s').select(listColumns).where('s.id', '=', id).executeTakeFirst(),

    list: async (filter: AgentServerFilter): Promise<{ total: number; rows: AgentServerListRow[] }> => {
      let query = joined().where('s.organisation_id', '=', filter.organisationId);
      if (filter.workspaceId) query = query.where('s.workspace_id', '=', filter.workspaceId);
      if (filter.integrationId) query = query.where('s.integration_id', '=', filter.integrationId);
      if (filter.status) query = query.where('s.status', '=', filter.status);
      const search = filter.search;
      if (search) query = query.where((eb) => nameOrSlugContains(eb, eb.ref('s.name'), eb.ref('s.slug'), search));
      return pageOf(
        query,
        (q) => q.selectAll('s').select(listColumns).orderBy('s.created_at', 'asc').orderBy('s.id'),
        filter,
      );
    },

    update: (id: string, patch: Partial<AgentServerRow>) =>
      db.updateTable('agent_servers').set(patch).where('id', '=', id).execute(),

    /** The server's own skill switches (skills without one are enabled). */
    listSkillSwitches: (serverId: string) =>
      db.selectFrom('agent_server_skills').select(['skill_id', 'enabled']).where('server_id', '=', serverId).execute(),

    setSkills: (serverId: string, switches: ReadonlyArray<{ skillId: string; enabled: boolean }>) =>
      db.transaction().execute(async (trx) => {
        for (const s of switches) {
          await trx
            .deleteFrom('agent_server_skills')
            .where('server_id', '=', serverId)
            .where('skill_id', '=', s.skillId)
            .execute();
          await trx
            .insertInto('agent_server_skills')
            .values({ server_id: serverId, skill_id: s.skillId, enabled: s.enabled ? 1 : 0 })
            .execute();
        }
      }),

    /** The members of the server's workspace with their overrides, plus users with an override who are not members. */
    listUserAccess: async (serverId: string, workspaceId: string, page: PageWindow) => {
      const query = db
        .selectFrom('users as u')
        .leftJoin('agent_server_users as a', (join) =>
          join.onRef('a.user_id', '=', 'u.id').on('a.server_id', '=', serverId),
        )
        .where((eb) =>
          eb.or([
            eb(
              'u.id',
              'in',
              eb.selectFrom('workspace_members').select('user_id').where('workspace_id', '=', workspaceId),
            ),
            eb('a.server_id', '=', serverId),
          ]),
        );
      return pageOf(
        query,
        (q) =>
          q
            .select(['u.id as user_id', 'u.email', 'u.first_name', 'u.last_name', 'a.enabled'])
            .orderBy('u.created_at', 'asc')
            .orderBy('u.id'),
        page,
      ) as Promise<{ total: number; rows: UserAccessRow[] }>;
    },

    listUserOverrides: (serverId: string) =>
      db.selectFrom('agent_server_users').select(['user_id', 'enabled']).where('server_id', '=', serverId).execute(),

    setUserAccess: (
      serverId: string,
      entries: ReadonlyArray<{ userId: string; enabled: boolean | null }>,
      patch: Partial<AgentServerRow>,
    ) =>
      db.transaction().execute(async (trx) => {
        for (const entry of entries) {
          await trx
            .deleteFrom('agent_server_users')
            .where('server_id', '=', serverId)
            .where('user_id', '=', entry.userId)
            .execute();
          if (entry.enabled !== null)
            await trx
              .insertInto('agent_server_users')
              .values({ server_id: serverId, user_id: entry.userId, enabled: entry.enabled ? 1 : 0 })
              .execute();
        }
        await trx.updateTable('agent_servers').set(patch).where('id', '=', serverId).execute();
      }),
  };
}

export type AgentServerRepository = ReturnType<typeof createAgentServerRepository>;
