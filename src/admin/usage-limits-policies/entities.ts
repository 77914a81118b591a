import { isUuid } from '../../lib/ids.js';
import { periodStart } from '../../limits/periods.js';
import type { ApiKeyRepository } from '../../storage/repositories/api-keys.js';
import type {
  UsageLimitPolicyRepository,
  UsageLimitPolicyRow,
} from '../../storage/repositories/usage-limit-policies.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { pageWindow } from '../shared/pagination.js';
import type { EntityObject, ListEntitiesQuery, PolicyObject } from './schemas.js';

/** A bucket's value key is its group-by values, in `group_by` order, joined with this. */
export const VALUE_KEY_SEPARATOR = '|';

type Entity = Pick<EntityObject, 'entity_type' | 'entity_id'>;
type NamedEntity = { entity_type: 'api_key' | 'workspace'; entity_id: string };
const NO_ENTITY: Entity = { entity_type: null, entity_id: null };

/**
 * The API key or workspace a bucket belongs to, read off its value key when the policy groups
 * by `api_key` (preferred: the narrower one) or `workspace_id`; none for other groupings.
 */
export function entityOfBucket(groupBy: PolicyObject['group_by'], valueKey: string): Entity {
  const parts = groupBy.length === 1 ? [valueKey] : valueKey.split(VALUE_KEY_SEPARATOR);
  if (parts.length !== groupBy.length) return NO_ENTITY;
  for (const [key, entityType] of [
    ['api_key', 'api_key'],
    ['workspace_id', 'workspace'],
  ] as const) {
    const index = groupBy.findIndex((g) => g.key === key);
    const id = index >= 0 ? parts[index] : undefined;
    if (id) return { entity_type: entityType, entity_id: id };
  }
  return NO_ENTITY;
}

/**
 * Who a policy touches, for the entities lookup: one row per bucket of the current period,
 * then, with usage 0, the API keys and workspaces its conditions name that have no bucket yet.
 */
export function createEntityLookup(deps: {
  policies: UsageLimitPolicyRepository;
  workspaces: WorkspaceRepository;
  apiKeys: ApiKeyRepository;
}) {
  /** The live API keys and workspaces named by `api_key` / `workspace_id` conditions (by id, or workspace slug). */
  async function namedEntities(
    row: UsageLimitPolicyRow,
    conditions: PolicyObject['conditions'],
  ): Promise<NamedEntity[]> {
    const found = new Map<string, NamedEntity>();
    for (const { key, value } of conditions) {
      if (key === 'api_key' && isUuid(value)) {
        const apiKey = await deps.apiKeys.findById(row.organisation_id, value);
        if (apiKey && apiKey.status !== 'revoked')
          found.set(`api_key:${apiKey.id}`, { entity_type: 'api_key', entity_id: apiKey.id });
      } else if (key === 'workspace_id') {
        const workspace = await deps.workspaces.findByIdOrSlug(row.organisation_id, value);
        if (workspace && workspace.status === 'active')
          found.set(`workspace:${workspace.id}`, { entity_type: 'workspace', entity_id: workspace.id });
      }
    }
    return [...found.values()];
  }

  return async function listEntities(
    row: UsageLimitPolicyRow,
    query: ListEntitiesQuery,
  ): Promise<{ total: number; data: EntityObject[] }> {
    const conditions = JSON.parse(row.conditions) as PolicyObject['conditions'];
    const groupBy = JSON.parse(row.group_by) as PolicyObject['group_by'];
    const period = periodStart(row);

    let extras: EntityObject[] = [];
    const named = await namedEntities(row, conditions);
    if (named.length > 0 && query.status !== 'exhausted') {
      const touched = new Set(
        (await deps.policies.usage(row.id, period)).map((b) => {
          const entity = entityOfBucket(groupBy, b.value_key);
          return `${entity.entity_type}:${entity.entity_id}`;
        }),
      );
      const search = query.search?.toLowerCase();
      extras = named
        .filter((e) => !touched.has(`${e.entity_type}:${e.entity_id}`))
        .filter((e) => !search || e.entity_id.toLowerCase().includes(search))
        .map((e) => ({ id: e.entity_id, value_key: e.entity_id, current_usage: 0, status: 'active' as const, ...e }));
    }

    const { limit, offset } = pageWindow(query);
    const buckets = await deps.policies.listBuckets({
      policyId: row.id,
      periodStart: period,
      ...(query.status ? { status: { value: query.status, creditLimit: row.credit_limit } } : {}),
      ...(query.search ? { search: query.search } : {}),
      limit,
      offset,
    });
    const data: EntityObject[] = buckets.rows.map((b) => ({
      id: b.value_key,
      value_key: b.value_key,
      current_usage: b.current_usage,
      status: b.current_usage >= row.credit_limit ? 'exhausted' : 'active',
      ...entityOfBucket(groupBy, b.value_key),
    }));
    const extrasFrom = Math.max(0, offset - buckets.total);
    data.push(...extras.slice(extrasFrom, extrasFrom + (limit - data.length)));
    return { total: buckets.total + extras.length, data };
  };
}
