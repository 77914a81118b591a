import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import type { WorkspaceStatus } from '../../storage/schema.js';
import { pageWindow } from '../shared/pagination.js';
import { assertWorkspaceReachable } from '../shared/workspace-access.js';
import { withResetSchedule, type UsageLimits } from '../../limits/schemas.js';
import type { UsageCounterRepository } from '../../storage/repositories/usage-counters.js';
import type { CreateWorkspaceBody, UpdateWorkspaceBody, WorkspaceObject } from './schemas.js';

export function createWorkspaceService(deps: { workspaces: WorkspaceRepository; usage: UsageCounterRepository; clock: Clock }) {
  async function find(principal: Principal, idOrSlug: string): Promise<WorkspaceRow> {
    const row = await deps.workspaces.findByIdOrSlug(principal.organisationId, idOrSlug);
    if (!row) throw notFound('Workspace');
    assertWorkspaceReachable(principal, row.id);
    return row;
  }

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
        usage_limits: body.usage_limits ? JSON.stringify(withResetSchedule(body.usage_limits, deps.clock.now())) : null,
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
      const row = await find(principal, idOrSlug);
      const object = toWorkspaceObject(row);
      if (!object.usage_limits) return object;
      const limits = object.usage_limits as { last_reset_at?: string | null };
      const usage = await deps.usage.currentUsage('workspace', row.id, '', limits.last_reset_at ?? row.created_at);
      return { ...object, usage_limits: { ...object.usage_limits, current_usage: usage } };
    },

    /** Renames, and sets the workspace's budget; raising its credit limit lets traffic through at once. */
    async update(principal: Principal, idOrSlug: string, body: UpdateWorkspaceBody): Promise<WorkspaceRow> {
      if (!isOrgAdmin(principal)) throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins change workspaces.');
      const row = await find(principal, idOrSlug);
      const now = deps.clock.now();
      const patch: Partial<WorkspaceRow> = { last_updated_at: new Date(now).toISOString() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      const current = row.usage_limits === null ? null : (JSON.parse(row.usage_limits) as UsageLimits & { last_reset_at?: string | null });
      let usage = body.usage_limits === undefined ? current : body.usage_limits === null ? null : { ...withResetSchedule(body.usage_limits, now), last_reset_at: current?.last_reset_at ?? null };
      if (body.reset_usage && usage) usage = { ...usage, last_reset_at: new Date(now).toISOString() };
      if (body.usage_limits !== undefined || body.reset_usage) patch.usage_limits = usage === null ? null : JSON.stringify(usage);
      await deps.workspaces.update(row.id, patch);
      return { ...row, ...patch };
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
    usage_limits: row.usage_limits === null ? null : (JSON.parse(row.usage_limits) as Record<string, unknown>),
    last_reset_at: null,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'workspace',
  };
}
