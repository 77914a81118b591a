import { sql, type SqlBool } from 'kysely';
import type { Db } from '../database.js';
import type { UsageLimitPoliciesTable } from '../schema.js';
import { pageOf } from './paging.js';

export type UsageLimitPolicyRow = UsageLimitPoliciesTable;

/** The `usage_counters.scope_type` of policy buckets (api keys and workspaces use their own). */
export const POLICY_SCOPE = 'policy';

export interface UsageLimitPolicyFilter {
  organisationId: string;
  workspaceId?: string;
  status: UsageLimitPolicyRow['status'];
  type?: UsageLimitPolicyRow['type'];
  limit: number;
  offset: number;
}

/** One budget bucket of a policy in one period: the group-by values joined with `|`. */
export interface PolicyBucket {
  value_key: string;
  current_usage: number;
}

export interface BucketFilter {
  policyId: string;
  periodStart: string;
  /** `exhausted`: usage ≥ `creditLimit`; `active`: below it. */
  status?: { value: 'active' | 'exhausted'; creditLimit: number };
  /** Substring of the value key. */
  search?: string;
  limit: number;
  offset: number;
}

/** `%`, `_` and the escape character itself match literally in a LIKE pattern. */
/** A LIKE pattern for "contains", lower case: compared with lower(column), as PostgreSQL's LIKE is case-sensitive where SQLite's is not. */
const likeContains = (text: string) => `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;

export function createUsageLimitPolicyRepository(db: Db) {
  const buckets = (policyId: string, periodStart: string) =>
    db
      .selectFrom('usage_counters')
      .where('scope_type', '=', POLICY_SCOPE)
      .where('scope_id', '=', policyId)
      .where('period_start', '=', periodStart);

  return {
    insert: (row: UsageLimitPolicyRow) => db.insertInto('usage_limit_policies').values(row).execute(),

    findById: (organisationId: string, id: string) =>
      db
        .selectFrom('usage_limit_policies')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    list: async (filter: UsageLimitPolicyFilter) => {
      let query = db
        .selectFrom('usage_limit_policies')
        .where('organisation_id', '=', filter.organisationId)
        .where('status', '=', filter.status);
      if (filter.workspaceId) query = query.where('workspace_id', '=', filter.workspaceId);
      if (filter.type) query = query.where('type', '=', filter.type);
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), filter);
    },

    /**
     * Every active policy of an organisation, for enforcement on the request path: one indexed
     * query (`usage_limit_policies_scope`), archived policies left out.
     */
    listActive: (organisationId: string): Promise<UsageLimitPolicyRow[]> =>
      db
        .selectFrom('usage_limit_policies')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('status', '=', 'active')
        .orderBy('created_at', 'asc')
        .orderBy('id')
        .execute(),

    update: (id: string, patch: Partial<UsageLimitPolicyRow>) =>
      db.updateTable('usage_limit_policies').set(patch).where('id', '=', id).execute(),

    /** Every bucket of the policy in the period starting at `periodStart`. */
    usage: (policyId: string, periodStart: string): Promise<PolicyBucket[]> =>
      buckets(policyId, periodStart).select(['value_key', 'current_usage']).orderBy('value_key').execute(),

    /** A page of buckets, heaviest first, with the total that matches the filter. */
    listBuckets: async (filter: BucketFilter) => {
      let query = buckets(filter.policyId, filter.periodStart);
      if (filter.status)
        query = query.where(
          'current_usage',
          filter.status.value === 'exhausted' ? '>=' : '<',
          filter.status.creditLimit,
        );
      if (filter.search) {
        const pattern = likeContains(filter.search);
        query = query.where((eb) => sql<SqlBool>`lower(${eb.ref('value_key')}) like ${pattern} escape '!'`);
      }
      const { total } = await query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows =
        filter.limit === 0
          ? []
          : await query
              .select(['value_key', 'current_usage'])
              .orderBy('current_usage', 'desc')
              .orderBy('value_key')
              .limit(filter.limit)
              .offset(filter.offset)
              .execute();
      return { total: Number(total), rows };
    },

    /** Which of `valueKeys` already have a bucket in the period. */
    existingBuckets: async (policyId: string, periodStart: string, valueKeys: string[]): Promise<Set<string>> => {
      if (valueKeys.length === 0) return new Set();
      const rows = await buckets(policyId, periodStart)
        .select('value_key')
        .where('value_key', 'in', valueKeys)
        .execute();
      return new Set(rows.map((row) => row.value_key));
    },

    /** Resets one bucket: its usage in the period is forgotten. Returns how many rows went. */
    deleteBucket: async (policyId: string, periodStart: string, valueKey: string): Promise<number> => {
      const result = await db
        .deleteFrom('usage_counters')
        .where('scope_type', '=', POLICY_SCOPE)
        .where('scope_id', '=', policyId)
        .where('period_start', '=', periodStart)
        .where('value_key', '=', valueKey)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type UsageLimitPolicyRepository = ReturnType<typeof createUsageLimitPolicyRepository>;
