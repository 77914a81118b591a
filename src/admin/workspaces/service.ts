import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import { isOrgAdmin, keyKind, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import { isUniqueViolation } from '../../storage/repositories/integrations.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import type { WorkspaceStatus } from '../../storage/schema.js';
import { pageWindow } from '../shared/pagination.js';
import { assertWorkspaceReachable } from '../shared/workspace-access.js';
import { updatedUsageLimits, withResetSchedule } from '../../limits/schemas.js';
import type { UsageCounterRepository } from '../../storage/repositories/usage-counters.js';
import type { CreateWorkspaceBody, UpdateWorkspaceBody, WorkspaceObject } from './schemas.js';
import { guardrailUsesOf, type WorkspaceDefaults } from '../../guardrails/store/index.js';
import type { GuardrailUseCheck } from '../guardrails/references.js';

export function createWorkspaceService(deps: {
  workspaces: WorkspaceRepository;
  usage: UsageCounterRepository;
  clock: Clock;
  verifier: ApiKeyVerifier;
  /** Checks the guardrails of `defaults` (they must exist and be usable in the workspace). */
  checkGuardrails?: GuardrailUseCheck;
  /** Runs after `defaults` change, so that the gateway's guardrail lookup sees it at once. */
  onDefaultsChange?: () => void;
}) {
  /** The stored form of `defaults` (undefined: not sent; null: cleared). */
  async function defaultsOf(
    organisationId: string,
    workspaceId: string,
    defaults: WorkspaceDefaults | null | undefined,
    stored: string | null = null,
  ) {
    if (defaults === undefined) return undefined;
    if (defaults === null) return null;
    // `defaults: {allowed_models}` alone leaves the guardrails as they are.
    if (defaults.input_guardrails === undefined && defaults.output_guardrails === undefined) return undefined;
    const { before, after } = guardrailUsesOf(defaults);
    await deps.checkGuardrails?.({ organisationId, workspaceId, uses: [...before, ...after], field: 'defaults' });
    // A list not sent keeps what is stored.
    const kept = publicDefaults(stored);
    return JSON.stringify({
      input_guardrails: defaults.input_guardrails ?? kept.input_guardrails,
      output_guardrails: defaults.output_guardrails ?? kept.output_guardrails,
    });
  }

  async function find(principal: Principal, idOrSlug: string): Promise<WorkspaceRow> {
    const row = await deps.workspaces.findByIdOrSlug(principal.organisationId, idOrSlug);
    if (!row) throw notFound('Workspace', 'workspaceId');
    assertWorkspaceReachable(principal, row.id);
    return row;
  }

  function assertOrgAdmin(principal: Principal, what: string): void {
    if (!isOrgAdmin(principal)) throw new AppError('ROLE_NOT_ALLOWED', `Only organisation owners and admins ${what}.`);
  }

  /** Archiving and unarchiving change what every key of the workspace may do: the key cache forgets them. */
  async function setStatus(row: WorkspaceRow, status: WorkspaceStatus): Promise<WorkspaceRow> {
    if (row.status === status) return row;
    const patch = { status, last_updated_at: new Date(deps.clock.now()).toISOString() };
    await deps.workspaces.update(row.id, patch);
    deps.verifier.invalidateAll();
    return { ...row, ...patch };
  }

  return {
    async create(principal: Principal, body: CreateWorkspaceBody): Promise<WorkspaceRow> {
      assertOrgAdmin(principal, 'create workspaces');
      const slug = body.slug ?? slugify(body.name);
      if (await deps.workspaces.slugTaken(principal.organisationId, slug)) {
        throw new AppError('CONFLICT', `A workspace with slug ${slug} already exists.`, { param: 'slug' });
      }
      const stamp = new Date(deps.clock.now()).toISOString();
      const id = newId();
      const defaults = await defaultsOf(principal.organisationId, id, body.defaults);
      const row: WorkspaceRow = {
        id,
        organisation_id: principal.organisationId,
        slug,
        name: body.name,
        description: body.description ?? null,
        status: 'active',
        is_default: 0,
        rate_limits: null,
        usage_limits: body.usage_limits ? JSON.stringify(withResetSchedule(body.usage_limits, deps.clock.now())) : null,
        defaults: defaults ?? null,
        allowed_models: storedAllowedModels(body.defaults),
        created_at: stamp,
        last_updated_at: stamp,
      };
      try {
        await deps.workspaces.insert(row);
      } catch (error) {
        // Two requests took the slug at once (instances on PostgreSQL do not wait for each other).
        if (isUniqueViolation(error))
          throw new AppError('CONFLICT', `A workspace with slug ${slug} already exists.`, {
            param: 'slug',
            cause: error,
          });
        throw error;
      }
      return row;
    },

    /**
     * Archived workspaces are listed only to organisation owners and admins (the spec's rule).
     * A workspace key lists its own workspace only.
     */
    async list(principal: Principal, query: { status: string; page_size: number; current_page: number }) {
      const statuses = [...new Set(query.status.split(','))] as WorkspaceStatus[];
      if (statuses.includes('archived') && !isOrgAdmin(principal)) {
        throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins list archived workspaces.', {
          param: 'status',
        });
      }
      if (keyKind(principal) === 'workspace' && principal.workspaceId !== null) {
        const own = await deps.workspaces.findById(principal.workspaceId);
        const matching = own && statuses.includes(own.status) ? [toWorkspaceObject(own)] : [];
        const { limit, offset } = pageWindow(query);
        return { total: matching.length, data: matching.slice(offset, offset + limit) };
      }
      const { total, rows } = await deps.workspaces.list({
        organisationId: principal.organisationId,
        statuses,
        ...pageWindow(query),
      });
      return { total, data: rows.map(toWorkspaceObject) };
    },

    async get(principal: Principal, idOrSlug: string): Promise<WorkspaceObject> {
      const row = await find(principal, idOrSlug);
      const object = toWorkspaceObject(row);
      if (!object.usage_limits) return object;
      const usage = await deps.usage.currentUsage('workspace', row.id, '', object.last_reset_at ?? row.created_at);
      return { ...object, usage_limits: { ...object.usage_limits, current_usage: usage } };
    },

    /** Renames, and sets the workspace's budget; raising its credit limit lets traffic through at once. */
    async update(principal: Principal, idOrSlug: string, body: UpdateWorkspaceBody): Promise<WorkspaceRow> {
      assertOrgAdmin(principal, 'change workspaces');
      const row = await find(principal, idOrSlug);
      if (row.status !== 'active')
        throw invalid(
          'workspaceId',
          `Workspace ${row.slug} is archived; unarchive it first (POST /v1/workspaces/${row.slug}/unarchive).`,
        );
      const now = deps.clock.now();
      const patch: Partial<WorkspaceRow> = { last_updated_at: new Date(now).toISOString() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      const usageLimits = updatedUsageLimits(row.usage_limits, body, now);
      if (usageLimits !== undefined) patch.usage_limits = usageLimits;
      const defaults = await defaultsOf(row.organisation_id, row.id, body.defaults, row.defaults ?? null);
      if (defaults !== undefined) patch.defaults = defaults;
      const modelsChange = body.defaults === null || body.defaults?.allowed_models !== undefined;
      if (modelsChange) patch.allowed_models = storedAllowedModels(body.defaults);
      await deps.workspaces.update(row.id, patch);
      if (defaults !== undefined) deps.onDefaultsChange?.();
      // Keys carry their workspace's model limits: they are read again on the next request.
      if (modelsChange) deps.verifier.invalidateAll();
      return { ...row, ...patch };
    },

    /**
     * Archives a workspace (the DELETE route). Nothing is revoked or deleted: its keys stop
     * working while it is archived (the key verifier refuses them) and work again once it is unarchived.
     * The default workspace, where admin keys' gateway traffic is counted, stays.
     */
    async archive(principal: Principal, idOrSlug: string): Promise<WorkspaceRow> {
      assertOrgAdmin(principal, 'archive workspaces');
      const row = await find(principal, idOrSlug);
      if (row.is_default === 1) throw invalid('workspaceId', 'The default workspace cannot be archived.');
      return setStatus(row, 'archived');
    },

    async unarchive(principal: Principal, idOrSlug: string): Promise<WorkspaceRow> {
      assertOrgAdmin(principal, 'unarchive workspaces');
      return setStatus(await find(principal, idOrSlug), 'active');
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;

/** `defaults.allowed_models` as stored: JSON text, or null for any model. */
const storedAllowedModels = (defaults: { allowed_models?: string[] | null | undefined } | null | undefined) =>
  defaults?.allowed_models ? JSON.stringify(defaults.allowed_models) : null;

export function toWorkspaceObject(row: WorkspaceRow): WorkspaceObject {
  const usageLimits = row.usage_limits === null ? null : (JSON.parse(row.usage_limits) as Record<string, unknown>);
  const lastReset = usageLimits?.last_reset_at;
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    status: row.status,
    is_default: row.is_default === 1,
    organisation_id: row.organisation_id,
    usage_limits: usageLimits,
    last_reset_at: typeof lastReset === 'string' ? lastReset : null,
    defaults: {
      ...publicDefaults(row.defaults ?? null),
      allowed_models: row.allowed_models ? (JSON.parse(row.allowed_models) as string[]) : null,
    },
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'workspace',
  };
}

function publicDefaults(stored: string | null): Omit<WorkspaceObject['defaults'], 'allowed_models'> {
  const parsed = stored === null ? {} : (JSON.parse(stored) as Partial<WorkspaceObject['defaults']>);
  return { input_guardrails: parsed.input_guardrails ?? [], output_guardrails: parsed.output_guardrails ?? [] };
}
