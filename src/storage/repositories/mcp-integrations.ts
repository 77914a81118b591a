import type { ExpressionBuilder } from 'kysely';
import type { Db } from '../database.js';
import type {
  Database,
  McpCapabilitiesTable,
  McpCapabilityType,
  McpIntegrationsTable,
  McpIntegrationWorkspacesTable,
  McpOAuthClientsTable,
} from '../schema.js';
import { pageOf, type PageWindow } from './paging.js';
import { nameOrSlugContains, sluggedRowLookups } from './slugged-rows.js';

export type McpIntegrationRow = McpIntegrationsTable;
export type McpCapabilityRow = McpCapabilitiesTable;
export type McpIntegrationWorkspaceRow = McpIntegrationWorkspacesTable;

export interface McpIntegrationFilter extends PageWindow {
  organisationId: string;
  /** organisation: only organisation integrations; workspace: only workspace ones. */
  type: 'organisation' | 'workspace' | 'all';
  /** Only the integrations this workspace owns or may use. */
  usableInWorkspaceId?: string | undefined;
  /** Only the integrations this workspace owns. */
  ownedByWorkspaceId?: string | undefined;
  search?: string | undefined;
  status: McpIntegrationRow['status'];
}

/** One capability as a sync found it on the server. */
export interface SyncedCapability {
  type: McpCapabilityType;
  name: string;
  title: string | null;
  description: string | null;
  definition: string;
}

type Eb = ExpressionBuilder<Database, 'mcp_integrations'>;

/**
 * Whether a workspace may use an integration: its own; or an organisation integration whose
 * row for the workspace enables it, or, without a row, whose global access is on.
 */
function usableIn(eb: Eb, workspaceId: string) {
  const row = (enabled: number) =>
    eb.exists(
      eb
        .selectFrom('mcp_integration_workspaces as w')
        .select('w.integration_id')
        .whereRef('w.integration_id', '=', 'mcp_integrations.id')
        .where('w.workspace_id', '=', workspaceId)
        .where('w.enabled', '=', enabled),
    );
  return eb.or([
    eb('mcp_integrations.workspace_id', '=', workspaceId),
    eb.and([
      eb('mcp_integrations.workspace_id', 'is', null),
      eb.or([row(1), eb.and([eb('mcp_integrations.global_workspace_access', '=', 1), eb.not(row(0))])]),
    ]),
  ]);
}

export function createMcpIntegrationRepository(db: Db) {
  return {
    insert: (row: McpIntegrationRow) => db.insertInto('mcp_integrations').values(row).execute(),

    /** svcgw's registration at the integration's authorization server (per-user OAuth). */
    findOAuthClient: (integrationId: string) =>
      db.selectFrom('mcp_oauth_clients').selectAll().where('integration_id', '=', integrationId).executeTakeFirst(),

    saveOAuthClient: (row: McpOAuthClientsTable) =>
      db
        .insertInto('mcp_oauth_clients')
        .values(row)
        .onConflict((oc) =>
          oc.column('integration_id').doUpdateSet({
            issuer: row.issuer,
            redirect_uri: row.redirect_uri,
            client_information: row.client_information,
            created_at: row.created_at,
          }),
        )
        .execute(),

    ...sluggedRowLookups(db, 'mcp_integrations'),

    /** For the gateway and the sync worker, which act for no caller. */
    findByIdAnywhere: (id: string) =>
      db.selectFrom('mcp_integrations').selectAll().where('id', '=', id).executeTakeFirst(),

    list: (filter: McpIntegrationFilter) => {
      let query = db
        .selectFrom('mcp_integrations')
        .where('organisation_id', '=', filter.organisationId)
        .where('status', '=', filter.status);
      if (filter.type === 'organisation') query = query.where('workspace_id', 'is', null);
      if (filter.type === 'workspace') query = query.where('workspace_id', 'is not', null);
      const usable = filter.usableInWorkspaceId;
      if (usable !== undefined) query = query.where((eb) => usableIn(eb, usable));
      if (filter.ownedByWorkspaceId !== undefined) query = query.where('workspace_id', '=', filter.ownedByWorkspaceId);
      const search = filter.search;
      if (search) query = query.where((eb) => nameOrSlugContains(eb, eb.ref('name'), eb.ref('slug'), search));
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), filter);
    },

    /** Active integrations, for the periodic sync. */
    listActive: () => db.selectFrom('mcp_integrations').selectAll().where('status', '=', 'active').execute(),

    /** Whether the workspace may use the integration (see `usableIn`). */
    usableIn: async (integrationId: string, workspaceId: string): Promise<boolean> =>
      (await db
        .selectFrom('mcp_integrations')
        .select('id')
        .where('id', '=', integrationId)
        .where((eb) => usableIn(eb, workspaceId))
        .executeTakeFirst()) !== undefined,

    update: (id: string, patch: Partial<McpIntegrationRow>) =>
      db.updateTable('mcp_integrations').set(patch).where('id', '=', id).execute(),

    /** Archives the integration and every server made from it, in one transaction. */
    archiveWithServers: (id: string, stamp: string) =>
      db.transaction().execute(async (trx) => {
        await trx
          .updateTable('mcp_integrations')
          .set({ status: 'archived', last_updated_at: stamp })
          .where('id', '=', id)
          .execute();
        await trx
          .updateTable('mcp_servers')
          .set({ status: 'archived', last_updated_at: stamp })
          .where('integration_id', '=', id)
          .where('status', '=', 'active')
          .execute();
      }),

    // ---- workspace access -------------------------------------------------------------------

    listWorkspaceAccess: (integrationId: string) =>
      db
        .selectFrom('mcp_integration_workspaces')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .orderBy('created_at')
        .orderBy('workspace_id')
        .execute(),

    /**
     * Sets the workspace access of an integration in one transaction: `clear` removes every
     * row first (override_existing_workspace_access), then each given row is written.
     */
    setWorkspaceAccess: (
      integrationId: string,
      change: {
        clear: boolean;
        rows: Array<{ workspaceId: string; enabled: boolean }>;
        globalAccess?: boolean | undefined;
        stamp: string;
      },
    ) =>
      db.transaction().execute(async (trx) => {
        if (change.clear)
          await trx.deleteFrom('mcp_integration_workspaces').where('integration_id', '=', integrationId).execute();
        for (const row of change.rows)
          await trx
            .insertInto('mcp_integration_workspaces')
            .values({
              integration_id: integrationId,
              workspace_id: row.workspaceId,
              enabled: row.enabled ? 1 : 0,
              created_at: change.stamp,
              last_updated_at: change.stamp,
            })
            .onConflict((oc) =>
              oc
                .columns(['integration_id', 'workspace_id'])
                .doUpdateSet({ enabled: row.enabled ? 1 : 0, last_updated_at: change.stamp }),
            )
            .execute();
        const patch: Partial<McpIntegrationRow> = { last_updated_at: change.stamp };
        if (change.globalAccess !== undefined) patch.global_workspace_access = change.globalAccess ? 1 : 0;
        await trx.updateTable('mcp_integrations').set(patch).where('id', '=', integrationId).execute();
      }),

    /** How many active workspaces may use each organisation integration. */
    workspaceCounts: async (organisationId: string, rows: readonly McpIntegrationRow[]) => {
      const counts = new Map<string, number>();
      const orgRows = rows.filter((row) => row.workspace_id === null);
      for (const row of rows) if (row.workspace_id !== null) counts.set(row.id, 1);
      if (orgRows.length === 0) return counts;
      const active = await db
        .selectFrom('workspaces')
        .select('id')
        .where('organisation_id', '=', organisationId)
        .where('status', '=', 'active')
        .execute();
      const access = await db
        .selectFrom('mcp_integration_workspaces')
        .selectAll()
        .where(
          'integration_id',
          'in',
          orgRows.map((row) => row.id),
        )
        .execute();
      for (const row of orgRows) {
        const own = new Map(access.filter((a) => a.integration_id === row.id).map((a) => [a.workspace_id, a.enabled]));
        counts.set(row.id, active.filter((w) => (own.get(w.id) ?? row.global_workspace_access) === 1).length);
      }
      return counts;
    },

    // ---- capabilities ------------------------------------------------------------------------

    listCapabilities: (integrationId: string, filter: PageWindow & { type?: McpCapabilityType | undefined }) => {
      let query = db
        .selectFrom('mcp_capabilities')
        .where('integration_id', '=', integrationId)
        .where('present', '=', 1);
      if (filter.type) query = query.where('type', '=', filter.type);
      return pageOf(query, (q) => q.selectAll().orderBy('type').orderBy('name'), filter);
    },

    /** Every present capability, for the gateway's view of what is enabled. */
    allCapabilities: (integrationId: string) =>
      db
        .selectFrom('mcp_capabilities')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .where('present', '=', 1)
        .execute(),

    capabilityCounts: async (integrationId: string) =>
      (
        await db
          .selectFrom('mcp_capabilities')
          .select(['type', (eb) => eb.fn.countAll<number>().as('total'), (eb) => eb.fn.sum<number>('enabled').as('on')])
          .where('integration_id', '=', integrationId)
          .where('present', '=', 1)
          .groupBy('type')
          .execute()
      ).map((row) => ({ type: row.type, total: Number(row.total), enabled: Number(row.on ?? 0) })),

    /** Sets `enabled` of the named capabilities; returns how many of them exist. */
    setCapabilitiesEnabled: (
      integrationId: string,
      changes: Array<{ type: McpCapabilityType; name: string; enabled: boolean }>,
      stamp: string,
    ) =>
      db.transaction().execute(async (trx) => {
        let found = 0;
        for (const change of changes) {
          const result = await trx
            .updateTable('mcp_capabilities')
            .set({ enabled: change.enabled ? 1 : 0, last_updated_at: stamp })
            .where('integration_id', '=', integrationId)
            .where('type', '=', change.type)
            .where('name', '=', change.name)
            .executeTakeFirst();
          found += Number(result.numUpdatedRows);
        }
        return found;
      }),

    /**
     * Stores what a sync found: new capabilities enabled, known ones refreshed (and present
     * again), ones the server no longer lists kept but hidden, with the metadata, in one
     * transaction.
     */
    applySync: (
      integrationId: string,
      found: readonly SyncedCapability[],
      metadata: Partial<McpIntegrationRow>,
      stamp: string,
      newId: () => string,
    ) =>
      db.transaction().execute(async (trx) => {
        const known = await trx
          .selectFrom('mcp_capabilities')
          .select(['id', 'type', 'name'])
          .where('integration_id', '=', integrationId)
          .execute();
        const byKey = new Map(known.map((row) => [`${row.type}\u0000${row.name}`, row.id]));
        const seen = new Set<string>();
        for (const item of found) {
          const key = `${item.type}\u0000${item.name}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const id = byKey.get(key);
          const fields = {
            title: item.title,
            description: item.description,
            definition: item.definition,
            present: 1,
            last_updated_at: stamp,
          };
          if (id) await trx.updateTable('mcp_capabilities').set(fields).where('id', '=', id).execute();
          else
            await trx
              .insertInto('mcp_capabilities')
              .values({
                id: newId(),
                integration_id: integrationId,
                type: item.type,
                name: item.name,
                enabled: 1,
                created_at: stamp,
                ...fields,
              })
              .execute();
        }
        const gone = known.filter((row) => !seen.has(`${row.type}\u0000${row.name}`)).map((row) => row.id);
        if (gone.length > 0)
          await trx
            .updateTable('mcp_capabilities')
            .set({ present: 0, last_updated_at: stamp })
            .where('id', 'in', gone)
            .execute();
        await trx.updateTable('mcp_integrations').set(metadata).where('id', '=', integrationId).execute();
      }),
  };
}

export type McpIntegrationRepository = ReturnType<typeof createMcpIntegrationRepository>;
