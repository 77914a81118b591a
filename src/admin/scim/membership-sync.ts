import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import type { MemberRepository } from '../../storage/repositories/members.js';
import type { ScimGroupRepository } from '../../storage/repositories/scim-groups.js';
import type { ScimMappingRepository } from '../../storage/repositories/scim-mappings.js';
import type { WorkspaceRole } from '../../storage/schema.js';

const RANK: Record<WorkspaceRole, number> = { member: 0, manager: 1, admin: 2 };

/**
 * Keeps the workspace memberships SCIM grants in step with the groups a user is in: each active
 * mapping of one of their groups makes them a member of its workspace, with the highest role any
 * of those mappings gives. Memberships made by hand are never changed or removed here; a
 * membership SCIM granted goes when no mapping grants it any more (with the user's own keys in
 * that workspace, as when a member is removed by hand).
 */
export function createMembershipSync(deps: {
  groups: Pick<ScimGroupRepository, 'groupIdsOf'>;
  mappings: Pick<ScimMappingRepository, 'grantsOf' | 'membershipsOf' | 'grant' | 'setGrantedRole'>;
  members: Pick<MemberRepository, 'remove'>;
  verifier: Pick<ApiKeyVerifier, 'invalidateAll'>;
  now: () => string;
}) {
  async function syncOne(userId: string): Promise<boolean> {
    const grants = await deps.mappings.grantsOf(await deps.groups.groupIdsOf(userId));
    const wanted = new Map<string, WorkspaceRole>();
    for (const { workspace_id, role } of grants) {
      const held = wanted.get(workspace_id);
      if (!held || RANK[role] > RANK[held]) wanted.set(workspace_id, role);
    }
    const current = await deps.mappings.membershipsOf(userId);
    const stamp = deps.now();
    let changed = false;
    for (const [workspaceId, role] of wanted) {
      const membership = current.find((row) => row.workspace_id === workspaceId);
      if (!membership) await deps.mappings.grant(workspaceId, userId, role, stamp);
      else if (membership.granted_by !== 'scim' || membership.role === role) continue;
      else await deps.mappings.setGrantedRole(workspaceId, userId, role, stamp);
      changed = true;
    }
    for (const membership of current) {
      if (membership.granted_by !== 'scim' || wanted.has(membership.workspace_id)) continue;
      await deps.members.remove(membership.workspace_id, userId, stamp);
      changed = true;
    }
    return changed;
  }

  return {
    /** Brings these users' SCIM memberships in step; keys act with the new roles from the next request. */
    async syncUsers(userIds: Iterable<string>): Promise<void> {
      let changed = false;
      for (const userId of new Set(userIds)) if (await syncOne(userId)) changed = true;
      if (changed) deps.verifier.invalidateAll();
    },
  };
}

export type MembershipSync = ReturnType<typeof createMembershipSync>;
