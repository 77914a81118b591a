import type { Principal } from '../../auth/principal.js';
import type { ApiKeyRow } from '../../storage/repositories/api-keys.js';
import { pageWindow } from '../shared/pagination.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import { findVisibleKey } from './key-access.js';
import { toApiKeyObject } from './key-object.js';
import type { ApiKeyObject } from './schemas.js';
import type { ApiKeyAdminDeps } from './service-deps.js';

/** Listing and reading keys, masked, with the usage of their current budget period. */
export function createApiKeyReads(deps: Pick<ApiKeyAdminDeps, 'keys' | 'workspaces' | 'usage' | 'clock'>) {
  /** The key object with `usage_limits.current_usage` of the current period. */
  async function withUsage(row: ApiKeyRow): Promise<ApiKeyObject> {
    const object = toApiKeyObject(row, deps.clock.now());
    if (!object.usage_limits) return object;
    const limits = object.usage_limits as { last_reset_at?: string | null };
    const usage = await deps.usage.currentUsage('api_key', row.id, '', limits.last_reset_at ?? row.created_at);
    return { ...object, usage_limits: { ...object.usage_limits, current_usage: usage } };
  }

  return {
    async list(
      principal: Principal,
      query: { workspace_id?: string | undefined; page_size: number; current_page: number },
    ) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const { total, rows } = await deps.keys.list({
        organisationId: principal.organisationId,
        ...(workspace ? { workspaceId: workspace.id } : {}),
        ...pageWindow(query),
      });
      return { total, data: await Promise.all(rows.map(withUsage)) };
    },

    get: async (principal: Principal, id: string) => withUsage(await findVisibleKey(deps.keys, principal, id)),
  };
}
