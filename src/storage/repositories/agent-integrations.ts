import type { Db } from '../database.js';
import type { AgentIntegrationsTable, AgentSkillsTable } from '../schema.js';
import { pageOf, type PageWindow } from './paging.js';
import { nameOrSlugContains, sluggedRowLookups } from './slugged-rows.js';

export type AgentIntegrationRow = AgentIntegrationsTable;
export type AgentSkillRow = AgentSkillsTable;

export interface AgentIntegrationFilter extends PageWindow {
  organisationId: string;
  /** Integrations this workspace may use: its own, and the organisation's enabled for it. */
  usableInWorkspaceId?: string;
  type?: 'organisation' | 'workspace' | undefined;
  status?: AgentIntegrationRow['status'] | undefined;
  /** Part of the name or slug, case-insensitive. */
  search?: string | undefined;
}

/** What a card read found, written in one go. */
export type SyncColumns = Pick<
  AgentIntegrationRow,
  | 'sync_status'
  | 'sync_error'
  | 'last_synced_at'
  | 'card'
  | 'card_rpc_url'
  | 'agent_name'
  | 'agent_version'
  | 'protocol_version'
>;

export type SkillInput = Omit<AgentSkillRow, 'integration_id' | 'enabled'>;

/** SQL of agent integrations, their workspace access and their skills. */
export function createAgentIntegrationRepository(db: Db) {
  /** Organisation integrations a workspace may use: enabled for it, or global and not disabled for it. */
  const usableIn = (workspaceId: string) =>
    db
      .selectFrom('agent_integrations as i')
      .leftJoin('agent_integration_workspaces as w', (join) =>
        join.onRef('w.integration_id', '=', 'i.id').on('w.workspace_id', '=', workspaceId),
      )
      .where((eb) =>
        eb.or([
          eb('i.workspace_id', '=', workspaceId),
          eb.and([
            eb('i.workspace_id', 'is', null),
            eb.or([
              eb('w.enabled', '=', 1),
              eb.and([eb('w.enabled', 'is', null), eb('i.global_workspace_access', '=', 1)]),
            ]),
          ]),
        ]),
      );

  return {
    insert: (row: AgentIntegrationRow) => db.insertInto('agent_integrations').values(row).execute(),

    ...sluggedRowLookups(db, 'agent_integrations'),

    list: async (filter: AgentIntegrationFilter) => {
      let query = db.selectFrom('agent_integrations as i').where('i.organisation_id', '=', filter.organisationId);
      if (filter.usableInWorkspaceId !== undefined) {
        const ids = usableIn(filter.usableInWorkspaceId).select('i.id');
        query = query.where('i.id', 'in', ids);
      }
      if (filter.type === 'organisation') query = query.where('i.workspace_id', 'is', null);
      if (filter.type === 'workspace') query = query.where('i.workspace_id', 'is not', null);
      if (filter.status) query = query.where('i.status', '=', filter.status);
      const search = filter.search;
      if (search) query = query.where((eb) => nameOrSlugContains(eb, eb.ref('i.name'), eb.ref('i.slug'), search));
      return pageOf(query, (q) => q.selectAll('i').orderBy('i.created_at', 'asc').orderBy('i.id'), filter);
    },

    /** Whether an integration may be used in a workspace (its own, or enabled for it). */
    usableInWorkspace: async (integrationId: string, workspaceId: string): Promise<boolean> =>
      (await usableIn(workspaceId).where('i.id', '=', integrationId).select('i.id').executeTakeFirst()) !== undefined,

    update: (id: string, patch: Partial<AgentIntegrationRow>) =>
      db.updateTable('agent_integrations').set(patch).where('id', '=', id).execute(),

    /** Active servers per integration, for the integrations given. */
    countServers: async (integrationIds: readonly string[]): Promise<Map<string, number>> => {
      if (integrationIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('agent_servers')
        .where('integration_id', 'in', integrationIds)
        .where('status', '=', 'active')
        .select((eb) => ['integration_id', eb.fn.countAll<number>().as('n')])
        .groupBy('integration_id')
        .execute();
      return new Map(rows.map((row) => [row.integration_id, Number(row.n)]));
    },

    listWorkspaceAccess: (integrationId: string) =>
      db.selectFrom('agent_integration_workspaces').selectAll().where('integration_id', '=', integrationId).execute(),

    /** Sets workspace switches (and the global one); `replace` clears every switch first. */
    setWorkspaceAccess: (
      integrationId: string,
      entries: ReadonlyArray<{ workspaceId: string; enabled: boolean }>,
      options: { replace: boolean; global?: boolean; patch: Partial<AgentIntegrationRow> },
    ) =>
      db.transaction().execute(async (trx) => {
        if (options.replace)
          await trx.deleteFrom('agent_integration_workspaces').where('integration_id', '=', integrationId).execute();
        for (const entry of entries) {
          await trx
            .deleteFrom('agent_integration_workspaces')
            .where('integration_id', '=', integrationId)
            .where('workspace_id', '=', entry.workspaceId)
            .execute();
          await trx
            .insertInto('agent_integration_workspaces')
            .values({ integration_id: integrationId, workspace_id: entry.workspaceId, enabled: entry.enabled ? 1 : 0 })
            .execute();
        }
        await trx
          .updateTable('agent_integrations')
          .set({
            ...options.patch,
            ...(options.global === undefined ? {} : { global_workspace_access: options.global ? 1 : 0 }),
          })
          .where('id', '=', integrationId)
          .execute();
      }),

    listSkills: (integrationId: string) =>
      db
        .selectFrom('agent_skills')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .orderBy('position')
        .execute(),

    /**
     * Writes what a card read found: the sync columns, and the card's skills. A skill the card
     * still has keeps its switch; a new one starts enabled; one the card dropped is deleted (its
     * servers' switches too).
     */
    saveSync: (integrationId: string, sync: Partial<SyncColumns>, skills: readonly SkillInput[] | null) =>
      db.transaction().execute(async (trx) => {
        await trx.updateTable('agent_integrations').set(sync).where('id', '=', integrationId).execute();
        if (skills === null) return;
        const before = await trx
          .selectFrom('agent_skills')
          .select(['skill_id', 'enabled'])
          .where('integration_id', '=', integrationId)
          .execute();
        const enabled = new Map(before.map((row) => [row.skill_id, row.enabled]));
        await trx.deleteFrom('agent_skills').where('integration_id', '=', integrationId).execute();
        for (const skill of skills)
          await trx
            .insertInto('agent_skills')
            .values({ ...skill, integration_id: integrationId, enabled: enabled.get(skill.skill_id) ?? 1 })
            .execute();
        const gone = [...enabled.keys()].filter((id) => !skills.some((skill) => skill.skill_id === id));
        if (gone.length > 0)
          await trx
            .deleteFrom('agent_server_skills')
            .where('skill_id', 'in', gone)
            .where(
              'server_id',
              'in',
              trx.selectFrom('agent_servers').select('id').where('integration_id', '=', integrationId),
            )
            .execute();
      }),

    setSkills: (integrationId: string, switches: ReadonlyArray<{ skillId: string; enabled: boolean }>) =>
      db.transaction().execute(async (trx) => {
        for (const s of switches)
          await trx
            .updateTable('agent_skills')
            .set({ enabled: s.enabled ? 1 : 0 })
            .where('integration_id', '=', integrationId)
            .where('skill_id', '=', s.skillId)
            .execute();
      }),
  };
}

export type AgentIntegrationRepository = ReturnType<typeof createAgentIntegrationRepository>;
