import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import type { WorkspaceStatus } from '../../storage/schema.js';
import { pageWindow } from '../shared/pagination.js';
import { assertWorkspaceReachable } from '../shared/workspace-access.js';
import type { CreateWorkspaceBody, WorkspaceObject } from './schemas.js';

export function createWorkspaceService(deps: { workspaces: WorkspaceRepository; clock: Clock }) {
  return {
    async create(principal: Principal, body: CreateWorkspaceBody): Promise<WorkspaceRow> {
      if (!isOrgAdmin(principal)) throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins create workspaces.');
      const slug = body.slug ?? slugify(body.name);
      if (await deps.workspaces.slugTaken(principal.organisationId, slug)) {
        throw new AppError('CONFLICT', `A workspace with slug ${slug} already exists.`, { param: 'slug' });
      }
      const stamp = new Date(deps.clock.now()).toISOString();
      const row: WorkspaceRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        slug,
        name: body.name,
        description: body.description ?? null,
        status: 'active',
        is_default: 0,
        rate_limits: null,
        usage_limits: null,
        created_at: stamp,
        last_updated_at: stamp,
      };
      await deps.workspaces.insert(row);
      return row;
    },

    /** Archived workspaces are listed only to organisation owners and admins (the spec's rule). */
    async list(principal: Principal, query: { status: string; page_size: number; current_page: number }) {
      const statuses = [...new Set(query.status.split(','))] as WorkspaceStatus[];
      if (statuses.includes('archived') && !isOrgAdmin(principal)) {
        throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins list archived workspaces.', { param: 'status' });
      }
      const { total, rows } = await deps.workspaces.list({ organisationId: principal.organisationId, statuses, ...pageWindow(query) });
      return { total, data: rows.map(toWorkspaceObject) };
    },

    async get(principal: Principal, idOrSlug: string): Promise<WorkspaceObject> {
      const row = await deps.workspaces.findByIdOrSlug(principal.organisationId, idOrSlug);
      if (!row) throw notFound('Workspace');
      assertWorkspaceReachable(principal, row.id);
      return toWorkspaceObject(row);
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;

export function toWorkspaceObject(row: WorkspaceRow): WorkspaceObject {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    status: row.status,
    is_default: row.is_default === 1,
    organisation_id: row.organisation_id,
    last_reset_at: null,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'workspace',
  };
}
