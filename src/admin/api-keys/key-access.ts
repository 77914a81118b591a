import { isOrgAdmin, keyKind, type Principal } from '../../auth/principal.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ApiKeyRepository, ApiKeyRow } from '../../storage/repositories/api-keys.js';
import { effectiveWorkspaceRole } from '../shared/workspace-access.js';

/** A key the caller may see: not revoked, and of the caller's workspace when it is a workspace key. */
export async function findVisibleKey(keys: ApiKeyRepository, principal: Principal, id: string): Promise<ApiKeyRow> {
  const row = isUuid(id) ? await keys.findById(principal.organisationId, id) : undefined;
  if (!row || row.status === 'revoked') throw notFound('API key');
  if (principal.workspaceId !== null && row.workspace_id !== principal.workspaceId)
    throw new AppError('WORKSPACE_FORBIDDEN', 'This workspace key cannot reach keys of another workspace.');
  return row;
}

/** A key the caller may change or revoke: admin keys by owners and admins, workspace keys by their managers or owner. */
export async function findManageableKey(keys: ApiKeyRepository, principal: Principal, id: string): Promise<ApiKeyRow> {
  const row = await findVisibleKey(keys, principal, id);
  if (row.type === 'organisation-service' && keyKind(principal) !== 'admin')
    throw new AppError('KEY_TYPE_NOT_ALLOWED', 'Only admin keys manage admin keys.');
  if (row.workspace_id !== null) {
    const role = effectiveWorkspaceRole(principal, row.workspace_id);
    const ownKey = row.user_id !== null && row.user_id === principal.userId;
    if (role !== 'admin' && role !== 'manager' && !ownKey)
      throw new AppError('ROLE_NOT_ALLOWED', 'Only workspace managers manage other users’ keys.');
  } else if (!isOrgAdmin(principal)) {
    throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins manage admin keys.');
  }
  return row;
}
