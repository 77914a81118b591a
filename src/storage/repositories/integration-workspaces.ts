import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../database.js';
import type { IntegrationWorkspacesTable } from '../schema.js';

export type IntegrationWorkspaceRow = IntegrationWorkspacesTable;

/**
 * Whether the integration `i` may be used in the workspace of `workspaceColumn`: that
 * workspace's own setting when it has one, else the integration's rule for every workspace.
 * For the gateway's lookups, which join integrations as `i`.
 */
export function integrationEnabledIn(workspaceColumn: string): Expression<SqlBool> {
  return sql<SqlBool>`coalesce((SELECT iw.enabled FROM integration_workspaces iw
    WHERE iw.integration_id = i.id AND iw.workspace_id = ${sql.ref(workspaceColumn)}), i.all_workspaces) = 1`;
}

/** Workspaces' own settings for integrations (`/v1/integrations/{slug}/workspaces`). */
export function createIntegrationWorkspaceRepository(db: Db) {
  return {
    /** Whether the integration may be used in the workspace: its own setting, else `allWorkspaces`. */
    enabledIn: async (integration: { id: string; all_workspaces: number }, workspaceId: string) => {
      const own = await db
        .selectFrom('integration_workspaces')
        .select('enabled')
        .where('integration_id', '=', integration.id)
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst();
      return (own?.enabled ?? integration.all_workspaces) === 1;
    },

    /** How many active workspaces of its organisation may use the integration. */
    enabledCount: async (integration: { id: string; organisation_id: string; all_workspaces: number }) => {
      const row = await db
        .selectFrom('workspaces as w')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('w.organisation_id', '=', integration.organisation_id)
        .where('w.status', '=', 'active')
        .where(
          sql<SqlBool>`coalesce((SELECT iw.enabled FROM integration_workspaces iw
            WHERE iw.integration_id = ${integration.id} AND iw.workspace_id = w.id), ${integration.all_workspaces}) = 1`,
        )
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },

    list: (integrationId: string) =>
      db.selectFrom('integration_workspaces').selectAll().where('integration_id', '=', integrationId).execute(),

    /** Sets `all_workspaces`, optionally forgets every workspace's own setting, then writes `rows`; one transaction. */
    apply: (change: {
      integrationId: string;
      allWorkspaces: boolean | undefined;
      resetWorkspaces: boolean;
      rows: IntegrationWorkspaceRow[];
      now: string;
    }) =>
      db.transaction().execute(async (trx) => {
        if (change.allWorkspaces !== undefined)
          await trx
            .updateTable('integrations')
            .set({ all_workspaces: change.allWorkspaces ? 1 : 0, last_updated_at: change.now })
            .where('id', '=', change.integrationId)
            .execute();
        if (change.resetWorkspaces)
          await trx.deleteFrom('integration_workspaces').where('integration_id', '=', change.integrationId).execute();
        for (const row of change.rows)
          await trx
            .insertInto('integration_workspaces')
            .values(row)
            .onConflict((oc) =>
              oc
                .columns(['integration_id', 'workspace_id'])
                .doUpdateSet({ enabled: row.enabled, last_updated_at: row.last_updated_at }),
            )
            .execute();
      }),
  };
}

export type IntegrationWorkspaceRepository = ReturnType<typeof createIntegrationWorkspaceRepository>;
