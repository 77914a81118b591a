import { sql } from 'kysely';
import type { Db } from '../database.js';
import type { ScimWorkspaceMappingsTable, WorkspaceRole } from '../schema.js';

export type ScimMappingRow = ScimWorkspaceMappingsTable;

/** A mapping with the name of its group (the group's current name, or the one it waits for). */
export interface ScimMappingView extends ScimMappingRow {
  group_display_name: string | null;
}

export interface ScimMappingFilter {
  organisationId: string;
  workspaceId?: string | undefined;
  groupId?: string | undefined;
  role?: WorkspaceRole | undefined;
}

/** A workspace membership of one user, with who granted it. */
export interface GrantedMembership {
  workspace_id: string;
  role: WorkspaceRole;
  granted_by: 'scim' | null;
}

/**
 * Group → workspace mappings (`/v1/scim/workspaces`), and the workspace memberships they grant
 * (`workspace_members.granted_by = 'scim'`).
 */
export function createScimMappingRepository(db: Db) {
  const view = () =>
    db
      .selectFrom('scim_workspace_mappings as m')
      .leftJoin('scim_groups as g', 'g.id', 'm.scim_group_id')
      .selectAll('m')
      .select('g.display_name as group_display_name');

  return {
    insert: (row: ScimMappingRow) => db.insertInto('scim_workspace_mappings').values(row).execute(),

    findActive: (organisationId: string, id: string): Promise<ScimMappingView | undefined> =>
      view()
        .where('m.organisation_id', '=', organisationId)
        .where('m.id', '=', id)
        .where('m.status', '=', 'active')
        .executeTakeFirst(),

    listActive: (filter: ScimMappingFilter): Promise<ScimMappingView[]> => {
      let query = view().where('m.organisation_id', '=', filter.organisationId).where('m.status', '=', 'active');
      if (filter.workspaceId !== undefined) query = query.where('m.workspace_id', '=', filter.workspaceId);
      if (filter.groupId !== undefined) query = query.where('m.scim_group_id', '=', filter.groupId);
      if (filter.role !== undefined) query = query.where('m.role', '=', filter.role);
      return query.orderBy('m.created_at').orderBy('m.id').execute();
    },

    archive: (id: string, stamp: string) =>
      db
        .updateTable('scim_workspace_mappings')
        .set({ status: 'archived', last_updated_at: stamp })
        .where('id', '=', id)
        .execute(),

    /** Active mappings of these groups into active workspaces: what group membership grants. */
    grantsOf: async (groupIds: readonly string[]) => {
      if (groupIds.length === 0) return [];
      return db
        .selectFrom('scim_workspace_mappings as m')
        .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
        .select(['m.workspace_id', 'm.role'])
        .where('m.scim_group_id', 'in', [...groupIds])
        .where('m.status', '=', 'active')
        .where('w.status', '=', 'active')
        .execute();
    },

    /** Links mappings waiting for a group of this name to the group; returns how many. */
    linkPending: async (organisationId: string, name: string, groupId: string, stamp: string): Promise<number> => {
      const result = await db
        .updateTable('scim_workspace_mappings')
        .set({ scim_group_id: groupId, last_updated_at: stamp })
        .where('organisation_id', '=', organisationId)
        .where('status', '=', 'active')
        .where('scim_group_id', 'is', null)
        .where(sql<string>`lower(scim_group_name)`, '=', name.toLowerCase())
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** A deleted group's mappings wait, under its last name, for a group of that name to come back. */
    unlinkGroup: (groupId: string, name: string, stamp: string) =>
      db
        .updateTable('scim_workspace_mappings')
        .set({ scim_group_id: null, scim_group_name: name, last_updated_at: stamp })
        .where('scim_group_id', '=', groupId)
        .where('status', '=', 'active')
        .execute(),

    membershipsOf: (userId: string): Promise<GrantedMembership[]> =>
      db
        .selectFrom('workspace_members')
        .select(['workspace_id', 'role', sql<'scim' | null>`granted_by`.as('granted_by')])
        .where('user_id', '=', userId)
        .execute(),

    grant: (workspaceId: string, userId: string, role: WorkspaceRole, stamp: string) =>
      db
        .insertInto('workspace_members')
        .values({
          workspace_id: workspaceId,
          user_id: userId,
          role,
          created_at: stamp,
          last_updated_at: stamp,
          granted_by: 'scim',
        })
        .execute(),

    setGrantedRole: (workspaceId: string, userId: string, role: WorkspaceRole, stamp: string) =>
      db
        .updateTable('workspace_members')
        .set({ role, last_updated_at: stamp })
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .where('granted_by', '=', 'scim')
        .execute(),
  };
}

export type ScimMappingRepository = ReturnType<typeof createScimMappingRepository>;
