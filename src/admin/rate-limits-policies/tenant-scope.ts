import type { Principal } from '../../auth/principal.js';
import { AppError } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ApiKeyRepository } from '../../storage/repositories/api-keys.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import { resolveWorkspace } from '../shared/workspace-access.js';

export interface PolicyCondition {
  key: string;
  value: string;
}

export interface TenantScopeDeps {
  workspaces: Pick<WorkspaceRepository, 'findByIdOrSlug'>;
  apiKeys: Pick<ApiKeyRepository, 'findById'>;
}

/**
 * The workspace a new policy is filed in: the one named by `workspace_id`, a workspace key's own,
 * or, for an admin key that names none (as the reference's examples do), the organisation's
 * default workspace. Filing decides who can read the policy; where it applies is its conditions.
 */
export async function policyHome(
  deps: { workspaces: WorkspaceRepository },
  principal: Principal,
  workspaceId: string | undefined,
): Promise<WorkspaceRow> {
  const named = await resolveWorkspace(deps.workspaces, principal, workspaceId, { required: false });
  const home = named ?? (await deps.workspaces.findDefault(principal.organisationId));
  if (!home) throw new AppError('INVALID_REQUEST', 'workspace_id is required.', { param: 'workspace_id' });
  return home;
}

/**
 * An admin key's conditions may reach the whole organisation, and nothing beyond it: a
 * `workspace_id` must name one of its workspaces, an `api_key` one of its keys, an
 * `organisation_id` the organisation itself. They are stored as given (a file applied with
 * `svcgw apply` names workspaces by slug and must read back the same). A policy that names another organisation's
 * workspace would never match (policies are matched against this organisation's requests only),
 * so it is refused rather than stored silently useless.
 */
async function checkOrganisationConditions(
  deps: TenantScopeDeps,
  principal: Principal,
  conditions: readonly PolicyCondition[],
): Promise<PolicyCondition[]> {
  const stored: PolicyCondition[] = [];
  for (const [index, condition] of conditions.entries()) {
    const param = `conditions[${index}].value`;
    if (condition.key === 'workspace_id') {
      const workspace = await deps.workspaces.findByIdOrSlug(principal.organisationId, condition.value);
      if (!workspace)
        throw new AppError('NOT_FOUND', `Workspace ${condition.value} is not a workspace of this organisation.`, {
          param,
        });
      stored.push({ ...condition });
      continue;
    }
    if (condition.key === 'api_key') {
      const apiKey = isUuid(condition.value)
        ? await deps.apiKeys.findById(principal.organisationId, condition.value.toLowerCase())
        : undefined;
      if (!apiKey) throw new AppError('NOT_FOUND', 'api_key must name an API key of this organisation.', { param });
      stored.push({ ...condition });
      continue;
    }
    if (condition.key === 'organisation_id' && condition.value !== principal.organisationId)
      throw forbidden(param, 'organisation_id must be the organisation of this API key.');
    stored.push({ ...condition });
  }
  return stored;
}

const forbidden = (param: string, message: string) => new AppError('WORKSPACE_FORBIDDEN', message, { param });

/**
 * The tenant wall of rate-limits and usage-limits policies. A policy made (or changed) with a
 * workspace key applies only inside that workspace:
 * - a `workspace_id` condition must name that workspace (it is stored as its id, so that a slug
 *   given up and taken by another workspace never moves the policy there);
 * - an `api_key` condition must name a key of that workspace (an unknown id is refused the
 *   same way, so the answer tells nothing about other workspaces);
 * - an `organisation_id` condition (organisation-wide) is refused;
 * - a policy without a workspace condition gets `workspace_id: <own id>` added, so that matching
 *   (src/limits/matching.ts, which reads only conditions) never applies it to another workspace.
 * `group_by` is left as given: once the conditions hold the policy inside the workspace, grouping
 * by `organisation_id` only ever forms the one bucket of that workspace's own traffic.
 * Admin keys keep organisation-wide rights, within their organisation (checkOrganisationConditions).
 */
export async function confineConditions(
  deps: TenantScopeDeps,
  principal: Principal,
  conditions: readonly PolicyCondition[],
): Promise<PolicyCondition[]> {
  const own = principal.workspaceId;
  if (own === null) return checkOrganisationConditions(deps, principal, conditions);
  const stored: PolicyCondition[] = [];
  for (const [index, condition] of conditions.entries()) {
    const param = `conditions[${index}]`;
    if (condition.key === 'organisation_id') {
      throw forbidden(
        `${param}.key`,
        'A workspace key makes policies for its own workspace only; organisation-wide policies (organisation_id conditions) need an admin key.',
      );
    }
    if (condition.key === 'workspace_id') {
      const workspace = await deps.workspaces.findByIdOrSlug(principal.organisationId, condition.value);
      if (!workspace || workspace.id !== own)
        throw forbidden(
          `${param}.value`,
          'A workspace key makes policies for its own workspace only: workspace_id must name this workspace.',
        );
      stored.push({ key: 'workspace_id', value: workspace.id });
      continue;
    }
    if (condition.key === 'api_key') {
      const apiKey = isUuid(condition.value)
        ? await deps.apiKeys.findById(principal.organisationId, condition.value.toLowerCase())
        : undefined;
      if (!apiKey || apiKey.workspace_id !== own)
        throw forbidden(
          `${param}.value`,
          'A workspace key makes policies for its own workspace only: api_key must name an API key of this workspace.',
        );
      stored.push({ key: 'api_key', value: apiKey.id });
      continue;
    }
    stored.push({ ...condition });
  }
  if (!stored.some((condition) => condition.key === 'workspace_id')) stored.push({ key: 'workspace_id', value: own });
  return stored;
}

/** Whether stored conditions hold a policy inside one workspace (a `workspace_id` condition naming it by id). */
export const isConfinedTo = (conditions: readonly PolicyCondition[], workspaceId: string): boolean =>
  conditions.some((condition) => condition.key === 'workspace_id' && condition.value === workspaceId);

/**
 * A workspace key changes (archives, resets, looks up the entities of) only the policies that
 * apply inside its own workspace. An admin's organisation-wide policy filed in the workspace
 * stays readable there, but only admin keys change it: otherwise one workspace could lift (or
 * tighten) a limit that other workspaces live under, and list their usage.
 */
export function assertChangeable(principal: Principal, storedConditions: string): void {
  if (principal.workspaceId === null) return;
  if (!isConfinedTo(JSON.parse(storedConditions) as PolicyCondition[], principal.workspaceId)) {
    throw new AppError(
      'WORKSPACE_FORBIDDEN',
      'This policy applies beyond this workspace (it is organisation-wide); only an admin key can change it or see its usage.',
    );
  }
}
