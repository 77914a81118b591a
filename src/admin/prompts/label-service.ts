import type { Principal } from '../../auth/principal.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { LabelRow } from '../../storage/repositories/prompts.js';
import { pageWindow } from '../shared/pagination.js';
import { assertWorkspaceReachable, resolveWorkspace } from '../shared/workspace-access.js';
import type { CreateLabelBody, LabelObject, ListLabelsQuery, UpdateLabelBody } from './catalog-schemas.js';
import type { PromptContext, PromptDeps } from './context.js';

/**
 * Labels of prompt versions (`{id}@production`): organisation labels, seen by every workspace,
 * and workspace labels. A name is unambiguous wherever it can be used: a workspace label cannot
 * take the name of an organisation label, nor an organisation label that of any label. The
 * universal labels (production, staging, development) cannot be changed or deleted.
 */
export function createLabelService(deps: PromptDeps, ctx: PromptContext) {
  const { repo } = deps;

  function checkOrganisation(principal: Principal, organisationId: string | undefined): void {
    if (organisationId !== undefined && organisationId !== principal.organisationId)
      throw new AppError('NOT_FOUND', `Organisation ${organisationId} not found.`, { param: 'organisation_id' });
  }

  async function find(principal: Principal, ref: string): Promise<LabelRow> {
    await ctx.ensureUniversalLabels(principal.organisationId);
    const row = isUuid(ref) ? await repo.findLabel(principal.organisationId, ref.toLowerCase()) : undefined;
    if (!row || row.status !== 'active') throw notFound('Label', 'labelId');
    if (row.workspace_id !== null) assertWorkspaceReachable(principal, row.workspace_id);
    return row;
  }

  async function assertNameFree(organisationId: string, workspaceId: string | null, name: string, exceptId?: string) {
    const clash = (await repo.findLabelsByName(organisationId, name)).find(
      (label) =>
        label.id !== exceptId &&
        (workspaceId === null || label.workspace_id === null || label.workspace_id === workspaceId),
    );
    if (clash)
      throw new AppError(
        'CONFLICT',
        `A label named ${name} already exists ${clash.workspace_id === null ? 'in the organisation' : 'in a workspace that would see it'}.`,
        { param: 'name' },
      );
  }

  function assertChangeable(principal: Principal, row: LabelRow): void {
    if (row.workspace_id === null && principal.workspaceId !== null)
      throw new AppError('WORKSPACE_FORBIDDEN', 'Organisation labels are changed and deleted with an admin key.');
    if (row.is_universal === 1)
      throw new AppError('CONFLICT', `${row.name} is a universal label; it cannot be changed or deleted.`, {
        param: 'labelId',
      });
  }

  return {
    async list(principal: Principal, query: ListLabelsQuery) {
      await ctx.assertView(principal);
      checkOrganisation(principal, query.organisation_id);
      await ctx.ensureUniversalLabels(principal.organisationId);
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const { total, rows } = await repo.listLabels({
        organisationId: principal.organisationId,
        workspaceId: workspace?.id,
        search: query.search,
        ...pageWindow(query),
      });
      return { total, data: rows.map(toObject) };
    },

    /** Without `workspace_id`, an admin key makes an organisation label; a workspace key always one of its workspace. */
    async create(principal: Principal, body: CreateLabelBody): Promise<LabelRow> {
      await ctx.assertWrite(principal);
      checkOrganisation(principal, body.organisation_id);
      await ctx.ensureUniversalLabels(principal.organisationId);
      const workspace = await resolveWorkspace(deps.workspaces, principal, body.workspace_id, { required: false });
      await assertNameFree(principal.organisationId, workspace?.id ?? null, body.name);
      const stamp = ctx.now();
      const row: LabelRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace?.id ?? null,
        name: body.name,
        description: body.description ?? null,
        color_code: body.color_code ?? null,
        is_universal: 0,
        status: 'active',
        created_at: stamp,
        last_updated_at: stamp,
      };
      await repo.insertLabel(row);
      return row;
    },

    async get(principal: Principal, ref: string, query: { organisation_id?: string | undefined }) {
      await ctx.assertView(principal);
      checkOrganisation(principal, query.organisation_id);
      return toObject(await find(principal, ref));
    },

    async update(principal: Principal, ref: string, body: UpdateLabelBody): Promise<LabelRow> {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      await ctx.assertWrite(principal);
      assertChangeable(principal, row);
      if (body.name !== undefined && body.name !== row.name)
        await assertNameFree(row.organisation_id, row.workspace_id, body.name, row.id);
      const patch: Partial<LabelRow> = { last_updated_at: ctx.now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      if (body.color_code !== undefined) patch.color_code = body.color_code;
      await repo.updateLabel(row.id, patch);
      return row;
    },

    /** Archives the label and takes it off every version that carried it. */
    async archive(principal: Principal, ref: string): Promise<LabelRow> {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      await ctx.assertWrite(principal);
      assertChangeable(principal, row);
      await repo.archiveLabel(row.id, ctx.now());
      return row;
    },
  };
}

export type LabelService = ReturnType<typeof createLabelService>;

function toObject(row: LabelRow): LabelObject {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    color_code: row.color_code,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    is_universal: row.is_universal === 1,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    status: row.status,
    object: 'label',
  };
}
