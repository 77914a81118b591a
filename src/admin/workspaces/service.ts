import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import { isOrgAdmin, keyKind, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import type { WorkspaceStatus } from '../../storage/schema.js';
import { pageWindow } from '../shared/pagination.js';
import { assertWorkspaceReachable } from '../shared/workspace-access.js';
import { updatedUsageLimits, withResetSchedule } from '../../limits/schemas.js';
import type { UsageCounterRepository } from '../../storage/repositories/usage-counters.js';
import type { CreateWorkspaceBody, UpdateWorkspaceBody, WorkspaceObject, WorkspaceWithUsers } from './schemas.js';
import { guardrailUsesOf, type WorkspaceDefaults } from '../../guardrails/store/index.js';
import type { MemberRepository } from '../../storage/repositories/members.js';
import type { UserRepository } from '../../storage/repositories/users.js';
import { isUuid } from '../../lib/ids.js';
import { toMemberObject } from '../members/service.js';

/** `defaults` as sent: guardrails (guardrails store), default metadata; `allowed_models` is stored apart. */
type DefaultsInput = WorkspaceDefaults & { metadata?: Record<string, string> | null | undefined };

/** Members listed in a workspace read alone; the members route pages through more. */
const USERS_SHOWN = 500;
import type { GuardrailUseCheck } from '../guardrails/references.js';
import { insertUnique } from '../shared/unique-insert.js';

export function createWorkspaceService(deps: {
  workspaces: WorkspaceRepository;
  members: MemberRepository;
  users: UserRepository;
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
    defaults: DefaultsInput | null | undefined,
    stored: string | null = null,
  ) {
    if (defaults === undefined) return undefined;
    if (defaults === null) return null;
    const guardrailsSent = defaults.input_guardrails !== undefined || defaults.output_guardrails !== undefined;
    // `defaults: {allowed_models}` alone leaves the guardrails and metadata as they are.
    if (!guardrailsSent && defaults.metadata === undefined) return undefined;
    if (guardrailsSent) {
      const { input_guardrails, output_guardrails } = defaults;
      const { before, after } = guardrailUsesOf({ input_guardrails, output_guardrails });
      await deps.checkGuardrails?.({ organisationId, workspaceId, uses: [...before, ...after], field: 'defaults' });
    }
    // A field not sent keeps what is stored.
    const kept = publicDefaults(stored);
    return JSON.stringify({
      input_guardrails: defaults.input_guardrails ?? kept.input_guardrails,
      output_guardrails: defaults.output_guardrails ?? kept.output_guardrails,
      metadata: defaults.metadata === undefined ? kept.metadata : (defaults.metadata ?? {}),
    });
  }

  /** The users named on create (ids or e-mail addresses of the organisation's users), each once. */
  async function usersOf(principal: Principal, names: readonly string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const [index, name] of names.entries()) {
      const user = isUuid(name)
        ? await deps.users.findById(principal.organisationId, name.toLowerCase())
        : await deps.users.findByEmail(principal.organisationId, name);
      if (!user)
        throw new AppError('NOT_FOUND', `No user ${name} in this organisation (users are added by invites).`, {
          param: `users[${index}]`,
        });
      if (!ids.includes(user.id)) ids.push(user.id);
    }
    return ids;
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

  /** A workspace, with the current usage of its budget. */
  async function get(principal: Principal, idOrSlug: string): Promise<WorkspaceObject> {
    const row = await find(principal, idOrSlug);
    const object = toWorkspaceObject(row);
    const [limits] = object.usage_limits;
    if (!limits) return object;
    const usage = await deps.usage.currentUsage('workspace', row.id, '', object.last_reset_at ?? row.created_at);
    return { ...object, usage_limits: [{ ...limits, current_usage: usage }] };
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
      const members = await usersOf(principal, body.users ?? []);
      const row: WorkspaceRow = {
        id,
        organisation_id: principal.organisationId,
        slug,
        name: body.name,
        description: body.description ?? null,
        status: 'active',
        is_default: 0,
        rate_limits: storedRateLimits(body.rate_limits),
        usage_limits: body.usage_limits ? JSON.stringify(withResetSchedule(body.usage_limits, deps.clock.now())) : null,
        defaults: defaults ?? null,
        allowed_models: storedAllowedModels(body.defaults),
        created_at: stamp,
        last_updated_at: stamp,
      };
      await insertUnique(() => deps.workspaces.insert(row), {
        param: 'slug',
        message: `A workspace with slug ${slug} already exists.`,
      });
      if (members.length > 0)
        await deps.members.add(
          id,
          members.map((userId) => ({ userId, role: 'member' as const })),
          stamp,
        );
      return row;
    },

    /**
     * Archived workspaces are listed only to organisation owners and admins (the spec's rule).
     * A workspace key lists its own workspace only.
     */
    async list(
      principal: Principal,
      query: {
        status: string;
        name?: string | undefined;
        exact_name?: string | undefined;
        page_size: number;
        current_page: number;
      },
    ) {
      const statuses = [...new Set(query.status.split(','))] as WorkspaceStatus[];
      if (statuses.includes('archived') && !isOrgAdmin(principal)) {
        throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins list archived workspaces.', {
          param: 'status',
        });
      }
      if (keyKind(principal) === 'workspace' && principal.workspaceId !== null) {
        const own = await deps.workspaces.findById(principal.workspaceId);
        const matching =
          own && statuses.includes(own.status) && nameMatches(own.name, query) ? [toWorkspaceObject(own)] : [];
        const { limit, offset } = pageWindow(query);
        return { total: matching.length, data: matching.slice(offset, offset + limit) };
      }
      const { total, rows } = await deps.workspaces.list({
        organisationId: principal.organisationId,
        statuses,
        ...(query.name ? { nameContains: query.name } : {}),
        ...(query.exact_name ? { exactName: query.exact_name } : {}),
        ...pageWindow(query),
      });
      return { total, data: rows.map(toWorkspaceObject) };
    },

    get,

    /** The workspace with its members (the first USERS_SHOWN), as GET of one workspace answers. */
    async getWithUsers(principal: Principal, idOrSlug: string): Promise<WorkspaceWithUsers> {
      const object = await get(principal, idOrSlug);
      const { rows } = await deps.members.list({ workspaceId: object.id, limit: USERS_SHOWN, offset: 0 });
      return { ...object, users: rows.map(toMemberObject) };
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
      if (body.rate_limits !== undefined) patch.rate_limits = storedRateLimits(body.rate_limits);
      const defaults = await defaultsOf(row.organisation_id, row.id, body.defaults, row.defaults ?? null);
      if (defaults !== undefined) patch.defaults = defaults;
      const modelsChange = body.defaults === null || body.defaults?.allowed_models !== undefined;
      if (modelsChange) patch.allowed_models = storedAllowedModels(body.defaults);
      await deps.workspaces.update(row.id, patch);
      if (defaults !== undefined) deps.onDefaultsChange?.();
      // Keys carry their workspace's model limits and default metadata: they are read again on the next request.
      if (modelsChange || defaults !== undefined) deps.verifier.invalidateAll();
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

/** Rate limits as stored: JSON, or null for none. */
const storedRateLimits = (limits: readonly unknown[] | null | undefined) =>
  limits && limits.length > 0 ? JSON.stringify(limits) : null;

/** The `name` (contains, any case) and `exact_name` filters of the list, for a workspace key's own workspace. */
const nameMatches = (name: string, query: { name?: string | undefined; exact_name?: string | undefined }) =>
  (query.name === undefined || name.toLowerCase().includes(query.name.toLowerCase())) &&
  (query.exact_name === undefined || name === query.exact_name);

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
    usage_limits: usageLimits === null ? [] : [usageLimits],
    rate_limits: row.rate_limits === null ? [] : (JSON.parse(row.rate_limits) as WorkspaceObject['rate_limits']),
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
  return {
    metadata: parsed.metadata ?? {},
    input_guardrails: parsed.input_guardrails ?? [],
    output_guardrails: parsed.output_guardrails ?? [],
  };
}
