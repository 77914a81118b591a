import type { AppError } from '../../lib/errors.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';

/** One workspace as the workspace access of an integration lists it. */
export interface WorkspaceAccessItem {
  id: string;
  slug: string;
  name: string;
  enabled: boolean;
  has_override: boolean;
}

/** The organisation's active workspaces: those an integration's workspace access lists. */
export async function activeWorkspaces(
  workspaces: WorkspaceRepository,
  organisationId: string,
): Promise<WorkspaceRow[]> {
  const { rows } = await workspaces.list({ organisationId, statuses: ['active'], limit: 100_000, offset: 0 });
  return rows;
}

/**
 * The workspace access of an organisation integration (MCP or agent): every active workspace,
 * enabled by its own switch when it has one, else by the integration's global access.
 */
export function workspaceAccessList(
  integration: { global_workspace_access: number },
  workspaces: readonly WorkspaceRow[],
  switches: ReadonlyArray<{ workspace_id: string; enabled: number }>,
) {
  const global = integration.global_workspace_access === 1;
  const own = new Map(switches.map((entry) => [entry.workspace_id, entry.enabled === 1]));
  const data: WorkspaceAccessItem[] = workspaces.map((workspace) => ({
    id: workspace.id,
    slug: workspace.slug,
    name: workspace.name,
    enabled: own.get(workspace.id) ?? global,
    has_override: own.has(workspace.id),
  }));
  return { object: 'list' as const, total: data.length, data, global_workspace_access: { enabled: global } };
}

/**
 * The workspaces a change of workspace access names (by id or slug), resolved in the caller's
 * organisation; `missing` makes the error for one that is not there (`workspaces[i].id`).
 */
export async function workspaceSwitches(
  workspaces: WorkspaceRepository,
  organisationId: string,
  entries: ReadonlyArray<{ id: string; enabled: boolean }>,
  missing: (ref: string, param: string) => AppError,
): Promise<Array<{ workspaceId: string; enabled: boolean }>> {
  const resolved: Array<{ workspaceId: string; enabled: boolean }> = [];
  for (const [i, entry] of entries.entries()) {
    const workspace = await workspaces.findByIdOrSlug(organisationId, entry.id);
    if (!workspace) throw missing(entry.id, `workspaces[${i}].id`);
    resolved.push({ workspaceId: workspace.id, enabled: entry.enabled });
  }
  return resolved;
}
