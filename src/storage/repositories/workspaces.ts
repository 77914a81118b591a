import type { Db } from '../database.js';
import type { WorkspaceRole, WorkspacesTable, WorkspaceStatus } from '../schema.js';
import { isUuid } from '../../lib/ids.js';
import { pageOf } from './paging.js';

export type WorkspaceRow = WorkspacesTable;

export function createWorkspaceRepository(db: Db) {
  return {
    insert: (row: WorkspaceRow) => db.insertInto('workspaces').values(row).execute(),

    /** Finds a workspace of the organisation by id or by slug, as the spec's "id or slug". */
    findByIdOrSlug: (organisationId: string, idOrSlug: string) =>
      db
        .selectFrom('workspaces')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where(isUuid(idOrSlug) ? 'id' : 'slug', '=', idOrSlug)
        .executeTakeFirst(),

    findById: (id: string) => db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst(),

    findDefault: (organisationId: string) =>
      db
        .selectFrom('workspaces')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('is_default', '=', 1)
        .executeTakeFirst(),

    slugTaken: async (organisationId: string, slug: string) =>
      (await db
        .selectFrom('workspaces')
        .select('id')
        .where('organisation_id', '=', organisationId)
        .where('slug', '=', slug)
        .executeTakeFirst()) !== undefined,

    list: async (filter: { organisationId: string; statuses: WorkspaceStatus[]; limit: number; offset: number }) => {
      const query = db
        .selectFrom('workspaces')
        .where('organisation_id', '=', filter.organisationId)
        .where('status', 'in', filter.statuses);
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), filter);
    },

    update: (id: string, patch: Partial<WorkspaceRow>) =>
      db.updateTable('workspaces').set(patch).where('id', '=', id).execute(),

    addMember: (workspaceId: string, userId: string, role: WorkspaceRole, createdAt: string) =>
      db
        .insertInto('workspace_members')
        .values({ workspace_id: workspaceId, user_id: userId, role, created_at: createdAt })
        .execute(),

    findMember: (workspaceId: string, userId: string) =>
      db
        .selectFrom('workspace_members')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .executeTakeFirst(),
  };
}

export type WorkspaceRepository = ReturnType<typeof createWorkspaceRepository>;
