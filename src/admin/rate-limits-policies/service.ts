import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ApiKeyRepository } from '../../storage/repositories/api-keys.js';
import type { RateLimitPolicyRepository, RateLimitPolicyRow } from '../../storage/repositories/rate-limit-policies.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { pageWindow } from '../shared/pagination.js';
import { findReachable, resolveWorkspace } from '../shared/workspace-access.js';
import type { CreatePolicyBody, ListPoliciesQuery, PolicyObject, UpdatePolicyBody } from './schemas.js';
import { assertChangeable, confineConditions, policyHome } from './tenant-scope.js';

/**
 * The rules of rate-limits policies: which workspace they belong to, who may touch them, and
 * the tenant wall (tenant-scope.ts): a workspace key's policy applies only inside its workspace.
 */
export function createRateLimitPolicyService(deps: {
  policies: RateLimitPolicyRepository;
  workspaces: WorkspaceRepository;
  apiKeys: ApiKeyRepository;
  clock: Clock;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();

  const findPolicy = (principal: Principal, id: string) =>
    findReachable(principal, id, deps.policies.findById, 'Rate limits policy');
  /** A policy this key may change: reachable, and (for a workspace key) applying only inside its workspace. */
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
        ...(query.unit ? { unit: query.unit } : {}),
        ...pageWindow(query),
      });
      return { total, data: rows.map(toObject) };
    },

    async create(principal: Principal, body: CreatePolicyBody): Promise<RateLimitPolicyRow> {
      if (body.organisation_id !== undefined && body.organisation_id !== principal.organisationId) {
        throw new AppError('WORKSPACE_FORBIDDEN', 'organisation_id is not the organisation of this API key.', {
          param: 'organisation_id',
        });
      }
      const workspace = await policyHome(deps, principal, body.workspace_id);
      const conditions = await confineConditions(deps, principal, body.conditions);
      const stamp = now();
      const row: RateLimitPolicyRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace.id,
        name: body.name ?? null,
        conditions: JSON.stringify(conditions),
        group_by: JSON.stringify(body.group_by),
        type: body.type,
        unit: body.unit,
        value: body.value,
        status: 'active',
        created_at: stamp,
        last_updated_at: stamp,
      };
      await deps.policies.insert(row);
      return row;
    },

    get: async (principal: Principal, id: string) => toObject(await findPolicy(principal, id)),

    async update(principal: Principal, id: string, body: UpdatePolicyBody): Promise<RateLimitPolicyRow> {
      const row = await findChangeable(principal, id);
      const patch: Partial<RateLimitPolicyRow> = { last_updated_at: now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.conditions) patch.conditions = JSON.stringify(await confineConditions(deps, principal, body.conditions));
      if (body.group_by) patch.group_by = JSON.stringify(body.group_by);
      if (body.type) patch.type = body.type;
      if (body.unit) patch.unit = body.unit;
      if (body.value !== undefined) patch.value = body.value;
      if (body.status) patch.status = body.status;
      await deps.policies.update(row.id, patch);
      return { ...row, ...patch };
    },

    /** Deleting archives: the policy stops applying but stays readable for the record. */
    async archive(principal: Principal, id: string): Promise<RateLimitPolicyRow> {
      const row = await findChangeable(principal, id);
      if (row.status !== 'archived') await deps.policies.update(row.id, { status: 'archived', last_updated_at: now() });
      return row;
    },
  };
}

export type RateLimitPolicyService = ReturnType<typeof createRateLimitPolicyService>;

export function toObject(row: RateLimitPolicyRow): PolicyObject {
  return {
    id: row.id,
    name: row.name,
    conditions: JSON.parse(row.conditions) as PolicyObject['conditions'],
    group_by: JSON.parse(row.group_by) as PolicyObject['group_by'],
    type: row.type,
    unit: row.unit,
    value: row.value,
    status: row.status,
    workspace_id: row.workspace_id,
    organisation_id: row.organisation_id,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'rate_limits_policy',
  };
}
