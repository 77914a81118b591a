import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { WorkspaceRole } from '../../storage/schema.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';

/**
 * The caller's effective role in a workspace: organisation owners and admins act as workspace
 * admins everywhere; everyone else has the role of their membership, if any.
 */
export function effectiveWorkspaceRole(principal: Principal, workspaceId: string): WorkspaceRole | null {
  if (isOrgAdmin(principal)) return 'admin';
  return principal.workspaceId === workspaceId ? principal.workspaceRole : null;
}

/**
 * Resolves the workspace a request acts on. Workspace keys are pinned to their own workspace;
 * admin keys name one (by id or slug), and must when `required`.
 */
export async function resolveWorkspace(
  repo: WorkspaceRepository,
  principal: Principal,
  requested: string | undefined,
  options: { required: boolean; param?: string },
): Promise<WorkspaceRow | null> {
  const param = options.param ?? 'workspace_id';
  if (requested === undefined) {
    if (principal.workspaceId !== null)
      return (await repo.findByIdOrSlug(principal.organisationId, principal.workspaceId)) ?? null;
    if (options.required) throw invalid(param, `${param} is required when calling with an admin key.`);
    return null;
  }
  const workspace = await repo.findByIdOrSlug(principal.organisationId, requested);
  if (!workspace) throw new AppError('NOT_FOUND', `Workspace ${requested} not found.`, { param });
  assertWorkspaceReachable(principal, workspace.id);
  return workspace;
}

/** Workspace keys reach only their own workspace; admin keys reach every workspace of the organisation. */
export function assertWorkspaceReachable(principal: Principal, workspaceId: string): void {
  if (principal.workspaceId !== null && principal.workspaceId !== workspaceId) {
    throw new AppError('WORKSPACE_FORBIDDEN', 'This workspace key cannot reach another workspace.');
  }
}

/**
 * Finds a workspace-owned resource of the caller's organisation by id: 404 when there is none
 * (or it belongs to another organisation), 403 when it is in a workspace the key cannot reach.
 */
export async function findReachable<T extends { workspace_id: string }>(
  principal: Principal,
  id: string,
  find: (organisationId: string, id: string) => Promise<T | undefined>,
  what: string,
): Promise<T> {
  const row = isUuid(id) ? await find(principal.organisationId, id) : undefined;
  if (!row) throw notFound(what);
  assertWorkspaceReachable(principal, row.workspace_id);
  return row;
}
