import type { Db } from '../database.js';
import type { RateLimitPoliciesTable } from '../schema.js';
import { pageOf } from './paging.js';

export type RateLimitPolicyRow = RateLimitPoliciesTable;

export interface RateLimitPolicyFilter {
  organisationId: string;
  workspaceId?: string;
  status: RateLimitPolicyRow['status'];
  type?: RateLimitPolicyRow['type'];
  unit?: RateLimitPolicyRow['unit'];
  limit: number;
  offset: number;
}

export function createRateLimitPolicyRepository(db: Db) {
  return {
    insert: (row: RateLimitPolicyRow) => db.insertInto('rate_limit_policies').values(row).execute(),

    findById: (organisationId: string, id: string) =>
      db
        .selectFrom('rate_limit_policies')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    listActive: (organisationId: string) =>
      db
        .selectFrom('rate_limit_policies')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('status', '=', 'active')
        .execute(),

    list: async (filter: RateLimitPolicyFilter) => {
      let query = db
        .selectFrom('rate_limit_policies')
        .where('organisation_id', '=', filter.organisationId)
        .where('status', '=', filter.status);
      if (filter.workspaceId) query = query.where('workspace_id', '=', filter.workspaceId);
      if (filter.type) query = query.where('type', '=', filter.type);
      if (filter.unit) query = query.where('unit', '=', filter.unit);
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), filter);
    },

    update: (id: string, patch: Partial<RateLimitPolicyRow>) =>
      db.updateTable('rate_limit_policies').set(patch).where('id', '=', id).execute(),
  };
}

export type RateLimitPolicyRepository = ReturnType<typeof createRateLimitPolicyRepository>;
