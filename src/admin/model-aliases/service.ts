import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import { parseModelRoute } from '../../gateway/model-route.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { ConfigRepository } from '../../storage/repositories/configs.js';
import { isUniqueViolation } from '../../storage/repositories/integrations.js';
import type { ModelAliasRepository, ModelAliasRow } from '../../storage/repositories/model-aliases.js';
import type { ProviderRepository } from '../../storage/repositories/providers.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import { pageWindow } from '../shared/pagination.js';
import { assertWorkspaceReachable, resolveWorkspace } from '../shared/workspace-access.js';
import type { AliasObject, CreateAliasBody, UpdateAliasBody } from './schemas.js';

/**
 * Model aliases: `model: "default-chat"` means `@slug/model` or a config. A workspace alias may
 * name only a provider or config of its workspace; an organisation-wide alias names `@slug/model`,
 * resolved in the caller's workspace (a config belongs to one workspace, so it takes a workspace
 * alias). Organisation-wide aliases are changed by organisation owners and admins only.
 */
export function createModelAliasService(deps: {
  aliases: ModelAliasRepository;
  workspaces: WorkspaceRepository;
  configs: ConfigRepository;
  providers: ProviderRepository;
  clock: Clock;
  onChange: () => void;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();

  function assertMayChangeOrganisation(principal: Principal): void {
    if (principal.workspaceId !== null)
      throw new AppError('WORKSPACE_FORBIDDEN', "A workspace key manages its own workspace's aliases only.", {
        param: 'workspace_id',
      });
    if (!isOrgAdmin(principal))
      throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins manage organisation-wide aliases.');
  }

  /** The workspace an alias is created in; null for organisation-wide. */
  async function creationScope(principal: Principal, requested: string | null | undefined) {
    if (requested === null || (requested === undefined && principal.workspaceId === null)) {
      assertMayChangeOrganisation(principal);
      return null;
    }
    const workspace = await resolveWorkspace(deps.workspaces, principal, requested, { required: true });
    if (workspace!.status !== 'active') throw invalid('workspace_id', `Workspace ${workspace!.slug} is archived.`);
    return workspace!;
  }

  /** The stored target, after checking the owner can reach what it names. */
  async function targetOf(
    principal: Principal,
    workspace: WorkspaceRow | null,
    body: { model?: string | undefined; config_id?: string | undefined },
  ): Promise<Pick<ModelAliasRow, 'target_model' | 'config_id'>> {
    if (body.model !== undefined) {
      const route = parseModelRoute(body.model);
      if (!route) throw invalid('model', 'model is @<provider slug>/<model>.');
      const found = workspace
        ? (await deps.providers.findActiveForGateway(principal.organisationId, workspace.id, route.slug))
            ?.integration_status === 'active'
        : await deps.providers.activeSlugInOrganisation(principal.organisationId, route.slug);
      if (!found)
        throw new AppError(
          'NOT_FOUND',
          `No active provider @${route.slug} in ${workspace ? `workspace ${workspace.slug}` : 'the organisation'}.`,
          { param: 'model' },
        );
      return { target_model: body.model, config_id: null };
    }
    if (workspace === null)
      throw invalid(
        'config_id',
        'An organisation-wide alias names a model (@slug/model); a config belongs to one workspace, so declare its alias there.',
      );
    const config = isUuid(body.config_id!)
      ? await deps.configs.findById(principal.organisationId, body.config_id!.toLowerCase())
      : await deps.configs.findActiveBySlug(principal.organisationId, body.config_id!);
    if (!config || config.status !== 'active')
      throw new AppError('NOT_FOUND', `No active config ${body.config_id}.`, { param: 'config_id' });
    if (config.workspace_id !== workspace.id)
      throw new AppError('WORKSPACE_FORBIDDEN', `Config ${config.slug} belongs to another workspace than the alias.`, {
        param: 'config_id',
      });
    return { target_model: null, config_id: config.id };
  }

  async function find(principal: Principal, idOrName: string, requested: string | undefined): Promise<ModelAliasRow> {
    let row: ModelAliasRow | undefined;
    if (isUuid(idOrName)) row = await deps.aliases.find(principal.organisationId, idOrName, '');
    else if (requested !== undefined) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, requested, { required: true });
      row = await deps.aliases.find(principal.organisationId, idOrName, workspace!.id);
    } else {
      if (principal.workspaceId !== null)
        row = await deps.aliases.find(principal.organisationId, idOrName, principal.workspaceId);
      row ??= await deps.aliases.find(principal.organisationId, idOrName, principal.organisationId);
    }
    if (!row) throw notFound(`Alias ${idOrName}`, 'alias');
    if (row.workspace_id !== null) assertWorkspaceReachable(principal, row.workspace_id);
    return row;
  }

  async function assertMayChange(principal: Principal, row: ModelAliasRow): Promise<WorkspaceRow | null> {
    if (row.workspace_id === null) {
      assertMayChangeOrganisation(principal);
      return null;
    }
    return (await deps.workspaces.findById(row.workspace_id)) ?? null;
  }

  return {
    async list(
      principal: Principal,
      query: { workspace_id?: string | undefined; page_size: number; current_page: number },
    ) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const rows = workspace
        ? await deps.aliases.listScopes(principal.organisationId, [workspace.id, principal.organisationId])
        : await deps.aliases.listAll(principal.organisationId);
      const { limit, offset } = pageWindow(query);
      return { total: rows.length, data: rows.slice(offset, offset + limit).map(toAliasObject) };
    },

    async create(principal: Principal, body: CreateAliasBody): Promise<ModelAliasRow> {
      const workspace = await creationScope(principal, body.workspace_id);
      const stamp = now();
      const row: ModelAliasRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace?.id ?? null,
        scope_id: workspace?.id ?? principal.organisationId,
        name: body.name,
        ...(await targetOf(principal, workspace, body)),
        description: body.description ?? null,
        created_at: stamp,
        last_updated_at: stamp,
      };
      try {
        await deps.aliases.insert(row);
      } catch (error) {
        if (isUniqueViolation(error))
          throw new AppError(
            'CONFLICT',
            `An alias ${body.name} already exists ${workspace ? `in workspace ${workspace.slug}` : 'organisation-wide'}.`,
            { param: 'name', cause: error },
          );
        throw error;
      }
      deps.onChange();
      return row;
    },

    get: async (principal: Principal, idOrName: string, workspace: string | undefined) =>
      toAliasObject(await find(principal, idOrName, workspace)),

    async update(
      principal: Principal,
      idOrName: string,
      workspaceQuery: string | undefined,
      body: UpdateAliasBody,
    ): Promise<ModelAliasRow> {
      const row = await find(principal, idOrName, workspaceQuery);
      const workspace = await assertMayChange(principal, row);
      const patch: Partial<ModelAliasRow> = { last_updated_at: now() };
      if (body.model !== undefined || body.config_id !== undefined)
        Object.assign(patch, await targetOf(principal, workspace, body));
      if (body.description !== undefined) patch.description = body.description;
      await deps.aliases.update(row.id, patch);
      deps.onChange();
      return { ...row, ...patch };
    },

    async remove(principal: Principal, idOrName: string, workspaceQuery: string | undefined): Promise<ModelAliasRow> {
      const row = await find(principal, idOrName, workspaceQuery);
      await assertMayChange(principal, row);
      await deps.aliases.remove(row.id);
      deps.onChange();
      return row;
    },
  };
}

export type ModelAliasService = ReturnType<typeof createModelAliasService>;

export function toAliasObject(row: ModelAliasRow): AliasObject {
  return {
    id: row.id,
    name: row.name,
    model: row.target_model,
    config_id: row.config_id,
    workspace_id: row.workspace_id,
    organisation_id: row.organisation_id,
    description: row.description,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'model-alias',
  };
}
