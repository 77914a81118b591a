import type { Principal } from '../../auth/principal.js';
import { AppError } from '../../lib/errors.js';
import type { IntegrationRepository } from '../../storage/repositories/integrations.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import { resolveWorkspace } from '../shared/workspace-access.js';

/**
 * The workspace a provider or virtual key request acts on: a workspace key's own, the one an
 * admin key names (id or slug), or else the organisation's default workspace.
 */
export async function credentialWorkspace(
  workspaces: WorkspaceRepository,
  integrations: IntegrationRepository,
  principal: Principal,
  requested: string | undefined,
): Promise<WorkspaceRow> {
  const workspace =
    (await resolveWorkspace(workspaces, principal, requested, { required: false })) ??
    (await integrations.findDefaultWorkspace(principal.organisationId));
  if (!workspace)
    throw new AppError('NOT_FOUND', 'The organisation has no default workspace; name one in workspace_id.', {
      param: 'workspace_id',
    });
  return workspace;
}
