import { sql } from 'kysely';
import type { Db } from '../database.js';
import type { WorkspaceRole, WorkspacesTable, WorkspaceStatus } from '../schema.js';
import { isUuid } from '../../lib/ids.js';
import { pageOf } from './paging.js';

export type WorkspaceRow = WorkspacesTable;

/** A LIKE pattern for "contains, any case", with the wildcards of the text escaped. */
const containsPattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

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

    list: async (filter: {
      organisationId: string;
      statuses: WorkspaceStatus[];
      /** Name contains, without regard to case. */
      nameContains?: string;
      exactName?: string;
      limit: number;
      offset: number;
    }) => {
      let query = db
        .selectFrom('workspaces')
        .where('organisation_id', '=', filter.organisationId)
        .where('status', 'in', filter.statuses);
      if (filter.nameContains !== undefined)
        query = query.where(
          sql<string>`lower(name)`,
          'like',
          sql<string>`${containsPattern(filter.nameContains)} escape '\\'`,
        );
      if (filter.exactName !== undefined) query = query.where('name', '=', filter.exactName);
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
