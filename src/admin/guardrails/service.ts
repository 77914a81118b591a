import type { Principal } from '../../auth/principal.js';
import { toActions, toCheck, type GuardrailActions, type GuardrailCheck } from '../../guardrails/store/index.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { isUuid, newId, slugify } from '../../lib/ids.js';
import type { GuardrailRepository, GuardrailRow, GuardrailVersionRow } from '../../storage/repositories/guardrails.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { pageWindow } from '../shared/pagination.js';
import { assertWorkspaceReachable, resolveWorkspace } from '../shared/workspace-access.js';
import type {
  CreateGuardrailBody,
  GuardrailObject,
  GuardrailSummary,
  GuardrailVersionObject,
  ListGuardrailsQuery,
  UpdateGuardrailBody,
} from './schemas.js';
import { keepRedacted, maskChecks } from './secrets.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';

/**
 * The rules of guardrails. An organisation guardrail (made by an admin key without
 * `workspace_id`) is usable, and readable, in every workspace; only admin keys change it. A
 * workspace guardrail is reachable from its own workspace only.
 */
export function createGuardrailService(deps: {
  guardrails: GuardrailRepository;
  workspaces: WorkspaceRepository;
  clock: Clock;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const actor = (principal: Principal) => principal.userId ?? principal.keyId;

  function assertOwnOrganisation(principal: Principal, organisationId: string | undefined): void {
    if (organisationId !== undefined && organisationId !== principal.organisationId)
      throw new AppError('NOT_FOUND', `Organisation ${organisationId} not found.`, { param: 'organisation_id' });
  }

  async function find(principal: Principal, idOrSlug: string): Promise<GuardrailRow> {
    const row = isUuid(idOrSlug)
      ? await deps.guardrails.findById(principal.organisationId, idOrSlug.toLowerCase())
      : await deps.guardrails.findBySlug(principal.organisationId, idOrSlug);
    if (!row) throw notFound('Guardrail', 'guardrailId');
    if (row.workspace_id !== null) assertWorkspaceReachable(principal, row.workspace_id);
    return row;
  }

  async function findChangeable(principal: Principal, idOrSlug: string): Promise<GuardrailRow> {
    const row = await find(principal, idOrSlug);
    if (row.workspace_id === null && principal.workspaceId !== null)
      throw new AppError(
        'WORKSPACE_FORBIDDEN',
        "A workspace key reads the organisation's guardrails but cannot change them.",
      );
    return row;
  }

  async function latest(row: GuardrailRow): Promise<GuardrailVersionRow> {
    const version = await deps.guardrails.findVersion(row.id, row.latest_version_id);
    if (!version) throw new Error(`guardrail ${row.id} has no version ${row.latest_version_id}`);
    return version;
  }

  async function assertSlugFree(organisationId: string, slug: string): Promise<void> {
    const taken = await deps.guardrails.findBySlug(organisationId, slug);
    if (taken?.status === 'active')
      throw new AppError('CONFLICT', `An active guardrail with slug ${slug} already exists.`, { param: 'slug' });
  }

  return {
    /** A workspace key (or `workspace_id`) lists what the workspace can use: its own guardrails and the organisation's. */
    async list(principal: Principal, query: ListGuardrailsQuery) {
      assertOwnOrganisation(principal, query.organisation_id);
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const { total, rows } = await deps.guardrails.list({
        organisationId: principal.organisationId,
        ...(workspace ? { usableInWorkspaceId: workspace.id } : {}),
        status: query.status,
        limit: query.page_size,
        offset: pageWindow(query).offset,
      });
      return { total, data: rows.map(toSummary) };
    },

    async create(
      principal: Principal,
      body: CreateGuardrailBody,
    ): Promise<{ row: GuardrailRow; version: GuardrailVersionRow }> {
      assertOwnOrganisation(principal, body.organisation_id);
      const workspace = await resolveWorkspace(deps.workspaces, principal, body.workspace_id, { required: false });
      if (workspace && workspace.status !== 'active')
        throw invalid('workspace_id', `Workspace ${workspace.slug} is archived.`);
      const slug = body.slug ?? `pg-${slugify(body.name)}`;
      await assertSlugFree(principal.organisationId, slug);
      const stamp = now();
      const id = newId();
      const version: GuardrailVersionRow = {
        id: newId(),
        guardrail_id: id,
        version: 1,
        name: body.name,
        checks: JSON.stringify(body.checks.map(toCheck)),
        actions: JSON.stringify(toActions(body.actions)),
        created_at: stamp,
        created_by_key_id: principal.keyId,
      };
      const row: GuardrailRow = {
        id,
        organisation_id: principal.organisationId,
        workspace_id: workspace?.id ?? null,
        slug,
        name: body.name,
        status: 'active',
        latest_version_id: version.id,
        owner_id: actor(principal),
        updated_by: null,
        created_at: stamp,
        last_updated_at: stamp,
      };
      await insertUnique(() => deps.guardrails.insert(row, version), slugTaken(slug));
      return { row, version };
    },

    async get(principal: Principal, idOrSlug: string): Promise<GuardrailObject> {
      const row = await find(principal, idOrSlug);
      const version = await latest(row);
      return { ...toSummary(row), version: version.version, ...contents(version) };
    },

    /** Every update is saved as a new version (the one in use from then on); the old ones stay readable. */
    async update(
      principal: Principal,
      idOrSlug: string,
      body: UpdateGuardrailBody,
    ): Promise<{ row: GuardrailRow; version: GuardrailVersionRow }> {
      const row = await findChangeable(principal, idOrSlug);
      const current = await latest(row);
      const previousChecks = JSON.parse(current.checks) as GuardrailCheck[];
      const checks = body.checks ? keepRedacted(body.checks.map(toCheck), previousChecks) : previousChecks;
      const actions = body.actions ? toActions(body.actions) : (JSON.parse(current.actions) as GuardrailActions);
      const stamp = now();
      const patch: Partial<GuardrailRow> = {
        name: body.name ?? row.name,
        updated_by: actor(principal),
        last_updated_at: stamp,
      };
      const version = await deps.guardrails.addVersion(
        row.id,
        {
          id: newId(),
          name: patch.name!,
          checks: JSON.stringify(checks),
          actions: JSON.stringify(actions),
          created_at: stamp,
          created_by_key_id: principal.keyId,
        },
        patch,
      );
      return { row: { ...row, ...patch, latest_version_id: version.id }, version };
    },

    /** Deleting archives: configs naming it stop finding it, its slug is free again, and it stays readable. */
    async archive(principal: Principal, idOrSlug: string): Promise<GuardrailRow> {
      const row = await findChangeable(principal, idOrSlug);
      if (row.status !== 'archived')
        await deps.guardrails.update(row.id, {
          status: 'archived',
          updated_by: actor(principal),
          last_updated_at: now(),
        });
      return row;
    },

    async listVersions(principal: Principal, idOrSlug: string): Promise<GuardrailVersionObject[]> {
      const row = await find(principal, idOrSlug);
      return (await deps.guardrails.listVersions(row.id)).map((version) => ({
        version_id: version.id,
        version: version.version,
        guardrail_id: row.id,
        name: version.name,
        ...contents(version),
        is_latest: version.id === row.latest_version_id,
        created_at: version.created_at,
        created_by_key_id: version.created_by_key_id,
        object: 'guardrail_version' as const,
      }));
    },
  };
}

export type GuardrailService = ReturnType<typeof createGuardrailService>;

function contents(version: GuardrailVersionRow): { checks: GuardrailCheck[]; actions: GuardrailActions } {
  return {
    checks: maskChecks(JSON.parse(version.checks) as GuardrailCheck[]),
    actions: JSON.parse(version.actions) as GuardrailActions,
  };
}

function toSummary(row: GuardrailRow): GuardrailSummary {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    status: row.status,
    version_id: row.latest_version_id,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    owner_id: row.owner_id,
    updated_by: row.updated_by,
    object: 'guardrail',
  };
}
