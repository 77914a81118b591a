import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { hasSchedule, nextResetAfter, periodStart } from '../../limits/periods.js';
import { afterCommit } from '../../storage/request-transaction.js';
import type { ApiKeyRepository } from '../../storage/repositories/api-keys.js';
import type {
  UsageLimitPolicyRepository,
  UsageLimitPolicyRow,
} from '../../storage/repositories/usage-limit-policies.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { pageWindow } from '../shared/pagination.js';
import { findReachable, resolveWorkspace } from '../shared/workspace-access.js';
import { assertChangeable, confineConditions, policyHome } from '../rate-limits-policies/tenant-scope.js';
import { createEntityLookup } from './entities.js';
import type {
  CreatePolicyBody,
  ListEntitiesQuery,
  ListPoliciesQuery,
  PolicyObject,
  UpdatePolicyBody,
} from './schemas.js';

type Limits = Pick<
  UsageLimitPolicyRow,
  'credit_limit' | 'alert_threshold' | 'periodic_reset' | 'periodic_reset_days' | 'next_usage_reset_at'
>;

/**
 * The rules across fields, checked on the policy as it will be stored (after merging an
 * update), so that no update can leave a policy that a create would refuse.
 */
function assertCoherent(limits: Limits): void {
  if (limits.periodic_reset && limits.periodic_reset_days) {
    throw invalid(
      'periodic_reset_days',
      'periodic_reset and periodic_reset_days are mutually exclusive; send null for the other one.',
    );
  }
  if (limits.alert_threshold !== null && limits.alert_threshold >= limits.credit_limit) {
    throw invalid('alert_threshold', `alert_threshold must be less than credit_limit (${limits.credit_limit}).`);
  }
  if (limits.next_usage_reset_at !== null && !hasSchedule(limits)) {
    throw invalid(
      'next_usage_reset_at',
      'next_usage_reset_at needs a schedule: periodic_reset or periodic_reset_days.',
    );
  }
}

const toIso = (value: string | null): string | null => (value === null ? null : new Date(value).toISOString());

/** The rules of usage-limits policies: which workspace they belong to, who may touch them, and their budgets. */
/** Empties a budget bucket where requests are counted (the limits' counter store). */
export interface BucketResetter {
  resetBucket(scopeType: 'policy', scopeId: string, valueKey: string, periodStart: string): Promise<void>;
}

export function createUsageLimitPolicyService(deps: {
  policies: UsageLimitPolicyRepository;
  workspaces: WorkspaceRepository;
  apiKeys: ApiKeyRepository;
  clock: Clock;
  budgets?: BucketResetter;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const nextReset = (schedule: Limits) => {
    const at = nextResetAfter(deps.clock.now(), schedule);
    return at === null ? null : new Date(at).toISOString();
  };
  const listEntities = createEntityLookup(deps);

  async function resetBucket(row: UsageLimitPolicyRow, valueKey: string): Promise<void> {
    await deps.policies.deleteBucket(row.id, periodStart(row), valueKey);
    // The counters live outside the database: emptied once the reset (and its audit record) commits.
    await afterCommit(() => deps.budgets?.resetBucket('policy', row.id, valueKey, periodStart(row)));
  }

  const findPolicy = (principal: Principal, id: string) =>
    findReachable(principal, id, deps.policies.findById, 'Usage limits policy');
  /** A policy this key may change or see the usage of: for a workspace key, one applying only inside its workspace. */
  const findChangeable = async (principal: Principal, id: string) => {
    const row = await findPolicy(principal, id);
    assertChangeable(principal, row.conditions);
    return row;
  };

  return {
    async list(principal: Principal, query: ListPoliciesQuery) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const { total, rows } = await deps.policies.list({
        organisationId: principal.organisationId,
        ...(workspace ? { workspaceId: workspace.id } : {}),
        status: query.status,
        ...(query.type ? { type: query.type } : {}),
        ...pageWindow(query),
      });
      return { total, data: rows.map((row) => toObject(row)) };
    },

    async create(principal: Principal, body: CreatePolicyBody): Promise<UsageLimitPolicyRow> {
      if (body.organisation_id !== undefined && body.organisation_id !== principal.organisationId) {
        throw new AppError('WORKSPACE_FORBIDDEN', 'organisation_id is not the organisation of this API key.', {
          param: 'organisation_id',
        });
      }
      const limits: Limits = {
        credit_limit: body.credit_limit,
        alert_threshold: body.alert_threshold ?? null,
        periodic_reset: body.periodic_reset ?? null,
        periodic_reset_days: body.periodic_reset_days ?? null,
        next_usage_reset_at: toIso(body.next_usage_reset_at ?? null),
      };
      assertCoherent(limits);
      const workspace = await policyHome(deps, principal, body.workspace_id);
      const conditions = await confineConditions(deps, principal, body.conditions);
      limits.next_usage_reset_at ??= nextReset(limits);
      const stamp = now();
      const row: UsageLimitPolicyRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace.id,
        name: body.name ?? null,
        conditions: JSON.stringify(conditions),
        group_by: JSON.stringify(body.group_by),
        type: body.type,
        ...limits,
        last_reset_at: null,
        status: 'active',
        created_at: stamp,
        last_updated_at: stamp,
      };
      await deps.policies.insert(row);
      return row;
    },

    async get(principal: Principal, id: string, options: { includeUsage: boolean }): Promise<PolicyObject> {
      const row = await findPolicy(principal, id);
      return toObject(row, options.includeUsage ? await deps.policies.usage(row.id, periodStart(row)) : undefined);
    },

    async update(principal: Principal, id: string, body: UpdatePolicyBody): Promise<UsageLimitPolicyRow> {
      const row = await findChangeable(principal, id);
      const limits: Limits = {
        credit_limit: body.credit_limit ?? row.credit_limit,
        alert_threshold: body.alert_threshold !== undefined ? body.alert_threshold : row.alert_threshold,
        periodic_reset: body.periodic_reset !== undefined ? body.periodic_reset : row.periodic_reset,
        periodic_reset_days:
          body.periodic_reset_days !== undefined ? body.periodic_reset_days : row.periodic_reset_days,
        next_usage_reset_at:
          body.next_usage_reset_at !== undefined ? toIso(body.next_usage_reset_at) : row.next_usage_reset_at,
      };
      const scheduleChanged =
        limits.periodic_reset !== row.periodic_reset || limits.periodic_reset_days !== row.periodic_reset_days;
      if (scheduleChanged && body.next_usage_reset_at === undefined) limits.next_usage_reset_at = null;
      assertCoherent(limits);
      limits.next_usage_reset_at ??= nextReset(limits);

      const patch: Partial<UsageLimitPolicyRow> = { ...limits, last_updated_at: now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.conditions) patch.conditions = JSON.stringify(await confineConditions(deps, principal, body.conditions));
      if (body.group_by) patch.group_by = JSON.stringify(body.group_by);
      if (body.status) patch.status = body.status;
      await deps.policies.update(row.id, patch);
      if (body.reset_usage_for_value !== undefined) await resetBucket(row, body.reset_usage_for_value);
      return { ...row, ...patch };
    },

    /** Deleting archives: the policy stops applying (enforcement skips it) but stays readable. */
    async archive(principal: Principal, id: string): Promise<UsageLimitPolicyRow> {
      const row = await findChangeable(principal, id);
      if (row.status !== 'archived') await deps.policies.update(row.id, { status: 'archived', last_updated_at: now() });
      return row;
    },

    async listEntities(principal: Principal, id: string, query: ListEntitiesQuery) {
      return listEntities(await findChangeable(principal, id), query);
    },

    /** Forgets one bucket's usage in the current period; resetting a bucket without usage is a no-op. */
    async resetEntity(principal: Principal, id: string, valueKey: string): Promise<UsageLimitPolicyRow> {
      const row = await findChangeable(principal, id);
      await resetBucket(row, valueKey);
      return row;
    },

    /** The active policies of an organisation, for enforcement (archived ones never apply). */
    listActive: (organisationId: string) => deps.policies.listActive(organisationId),
  };
}

export type UsageLimitPolicyService = ReturnType<typeof createUsageLimitPolicyService>;

export function toObject(
  row: UsageLimitPolicyRow,
  usage?: Array<{ value_key: string; current_usage: number }>,
): PolicyObject {
  const object: PolicyObject = {
    id: row.id,
    name: row.name,
    conditions: JSON.parse(row.conditions) as PolicyObject['conditions'],
    group_by: JSON.parse(row.group_by) as PolicyObject['group_by'],
    type: row.type,
    credit_limit: row.credit_limit,
    alert_threshold: row.alert_threshold,
    periodic_reset: row.periodic_reset,
    periodic_reset_days: row.periodic_reset_days,
    next_usage_reset_at: row.next_usage_reset_at,
    last_reset_at: row.last_reset_at,
    status: row.status,
    workspace_id: row.workspace_id,
    organisation_id: row.organisation_id,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'usage_limits_policy',
  };
  if (usage) {
    object.value_key_usage_map = Object.fromEntries(
      usage.map((b) => [
        b.value_key,
        {
          current_usage: b.current_usage,
          status: b.current_usage >= row.credit_limit ? ('exhausted' as const) : ('active' as const),
        },
      ]),
    );
  }
  return object;
}
