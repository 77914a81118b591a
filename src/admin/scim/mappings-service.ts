import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { ScimGroupRepository } from '../../storage/repositories/scim-groups.js';
import type {
  ScimMappingRepository,
  ScimMappingRow,
  ScimMappingView,
} from '../../storage/repositories/scim-mappings.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import type { CreateMappingBody, ListMappingsQuery, MappingObject } from './admin-schemas.js';
import type { MembershipSync } from './membership-sync.js';

/**
 * Group → workspace mappings (`/v1/scim/workspaces`): members of the group become members of the
 * workspace with the mapping's role. A mapping may name a group that the provider has not
 * pushed yet (by scim_group_name); it applies once a group of that name exists. Creating or
 * archiving a mapping brings the group's members' memberships in step at once.
 */
export function createScimMappingService(deps: {
  mappings: ScimMappingRepository;
  groups: Pick<ScimGroupRepository, 'findById' | 'findByName' | 'memberIds'>;
  workspaces: Pick<WorkspaceRepository, 'findByIdOrSlug'>;
  sync: MembershipSync;
  clock: Clock;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();

  async function workspaceOf(principal: Principal, idOrSlug: string) {
    const workspace = await deps.workspaces.findByIdOrSlug(principal.organisationId, idOrSlug);
    if (!workspace) throw new AppError('NOT_FOUND', `Workspace ${idOrSlug} not found.`, { param: 'workspace_id' });
    return workspace;
  }

  const syncGroup = async (groupId: string | null) => {
    if (groupId !== null) await deps.sync.syncUsers(await deps.groups.memberIds(groupId));
  };

  return {
    async list(principal: Principal, query: ListMappingsQuery) {
      const workspaceId =
        query.workspace_id === undefined ? undefined : (await workspaceOf(principal, query.workspace_id)).id;
      const rows = await deps.mappings.listActive({
        organisationId: principal.organisationId,
        workspaceId,
        groupId: query.scim_group_id,
        role: query.role,
      });
      return { mappings: rows.map(toMappingObject), total_count: rows.length };
    },

    async create(principal: Principal, body: CreateMappingBody): Promise<MappingObject> {
      const workspace = await workspaceOf(principal, body.workspace_id);
      if (workspace.status !== 'active')
        throw invalid('workspace_id', `Workspace ${workspace.slug} is archived; unarchive it first.`);
      let group = null;
      if (body.scim_group_id !== undefined) {
        group = isUuid(body.scim_group_id)
          ? await deps.groups.findById(principal.organisationId, body.scim_group_id)
          : undefined;
        if (!group) throw new AppError('NOT_FOUND', 'SCIM group not found.', { param: 'scim_group_id' });
      } else group = (await deps.groups.findByName(principal.organisationId, body.scim_group_name!)) ?? null;
      const name = group?.display_name ?? body.scim_group_name!;

      const existing = await deps.mappings.listActive({
        organisationId: principal.organisationId,
        workspaceId: workspace.id,
      });
      const same = existing.find((row) =>
        group
          ? row.scim_group_id === group.id
          : row.scim_group_id === null && row.scim_group_name?.toLowerCase() === name.toLowerCase(),
      );
      if (same)
        throw new AppError('CONFLICT', `The group is already mapped to this workspace (mapping ${same.id}).`, {
          param: group ? 'scim_group_id' : 'scim_group_name',
        });

      const stamp = now();
      const row: ScimMappingRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace.id,
        scim_group_id: group?.id ?? null,
        scim_group_name: name,
        role: body.role,
        status: 'active',
        created_at: stamp,
        last_updated_at: stamp,
      };
      await deps.mappings.insert(row);
      await syncGroup(row.scim_group_id);
      return toMappingObject({ ...row, group_display_name: group?.display_name ?? null });
    },

    /** Archives the mapping; the memberships it alone granted end (with the members' own keys there). */
    async remove(principal: Principal, id: string): Promise<ScimMappingView> {
      const row = isUuid(id) ? await deps.mappings.findActive(principal.organisationId, id) : undefined;
      if (!row) throw notFound('SCIM workspace mapping', 'scimWorkspaceGroupId');
      await deps.mappings.archive(row.id, now());
      await syncGroup(row.scim_group_id);
      return row;
    },
  };
}

export type ScimMappingService = ReturnType<typeof createScimMappingService>;

export const toMappingObject = (row: ScimMappingView): MappingObject => ({
  id: row.id,
  workspace_id: row.workspace_id,
  scim_group: row.group_display_name ?? row.scim_group_name ?? '',
  scim_group_id: row.scim_group_id,
  role: row.role,
});
