import type { Db } from '../database.js';
import type { DeploymentInstancesTable, DeploymentsTable, DeploymentType } from '../schema.js';
import { pageOf } from './paging.js';
import { sluggedRowLookups } from './slugged-rows.js';

export type DeploymentRow = DeploymentsTable;
export type DeploymentInstanceRow = DeploymentInstancesTable;

export interface DeploymentFilter {
  organisationId: string;
  type?: DeploymentType;
  status?: DeploymentRow['status'];
  limit: number;
  offset: number;
}

export function createDeploymentRepository(db: Db) {
  return {
    insert: (row: DeploymentRow) => db.insertInto('deployments').values(row).execute(),

    ...sluggedRowLookups(db, 'deployments'),

    /** Active deployments with this slug in any organisation: what `serve --deployment <slug>` joins. */
    listActiveBySlug: (slug: string) =>
      db.selectFrom('deployments').selectAll().where('slug', '=', slug).where('status', '=', 'active').execute(),

    /** By id alone, whatever its status: the deployment a running instance serves. */
    findByIdAnywhere: (id: string) => db.selectFrom('deployments').selectAll().where('id', '=', id).executeTakeFirst(),

    list: (filter: DeploymentFilter) => {
      let query = db.selectFrom('deployments').where('organisation_id', '=', filter.organisationId);
      if (filter.type) query = query.where('type', '=', filter.type);
      if (filter.status) query = query.where('status', '=', filter.status);
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), filter);
    },

    update: (id: string, patch: Partial<DeploymentRow>) =>
      db.updateTable('deployments').set(patch).where('id', '=', id).execute(),

    insertInstance: (row: DeploymentInstanceRow) => db.insertInto('deployment_instances').values(row).execute(),

    /** Moves an active instance's heartbeat; false when its row is no longer there (pruned) or not active. */
    heartbeat: async (id: string, at: string): Promise<boolean> => {
      const result = await db
        .updateTable('deployment_instances')
        .set({ last_heartbeat_at: at })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    markStopped: (id: string, at: string) =>
      db
        .updateTable('deployment_instances')
        .set({ status: 'stopped', stopped_at: at, last_heartbeat_at: at })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .execute(),

    /** The instances of a deployment heard from since `since`, oldest first. */
    listInstances: (deploymentId: string, since: string) =>
      db
        .selectFrom('deployment_instances')
        .selectAll()
        .where('deployment_id', '=', deploymentId)
        .where('last_heartbeat_at', '>=', since)
        .orderBy('started_at', 'asc')
        .orderBy('id')
        .execute(),

    /** Active instances of every deployment heard from since `since` (their own intervals say which are live). */
    listActiveInstances: (since: string) =>
      db
        .selectFrom('deployment_instances')
        .selectAll()
        .where('status', '=', 'active')
        .where('last_heartbeat_at', '>=', since)
        .execute(),

    /** Forgets instances silent since before `before` (gone, stopped or refused long ago). */
    pruneInstances: async (before: string): Promise<number> => {
      const result = await db
        .deleteFrom('deployment_instances')
        .where('last_heartbeat_at', '<', before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type DeploymentRepository = ReturnType<typeof createDeploymentRepository>;
