import type { Principal } from '../../auth/principal.js';
import { AppError } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import { parsedTemplates, partialsOf } from '../../prompts/index.js';
import type { PromptRow, PromptVersionRow } from '../../storage/repositories/prompts.js';
import { isUniqueViolation } from '../../storage/repositories/integrations.js';
import { pageWindow } from '../shared/pagination.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import type { PromptContext, PromptDeps } from './context.js';
import type {
  CreatePartialBody,
  ListPartialsQuery,
  PartialObject,
  PartialSummary,
  PartialVersionObject,
  UpdatePartialBody,
} from './schemas.js';

/**
 * Prompt partials: templates that prompts include with `{{>slug}}`. They live in the prompts
 * table (kind `partial`) and have the same version life: a new `string` is a new version, the
 * default one changes by makeDefault.
 */
export function createPartialService(deps: PromptDeps, ctx: PromptContext) {
  const { repo, lookup } = deps;

  /** A partial's text must parse, and the partials it includes must exist (and not include it back). */
  async function checkTemplate(principal: Principal, workspaceId: string, slug: string, string: string) {
    const refs = partialsOf(parsedTemplates({ string, is_raw_template: true }));
    if (refs.some((ref) => ref.slug === slug))
      throw new AppError('INVALID_REQUEST', `The partial ${slug} cannot include itself.`, { param: 'string' });
    await lookup.partials(principal.organisationId, workspaceId, refs, new Map(), [slug]);
  }

  const find = (principal: Principal, ref: string) => lookup.find(principal, 'partial', ref);

  return {
    async list(principal: Principal, query: ListPartialsQuery) {
      await ctx.assertView(principal);
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const collection =
        query.collection_id === undefined
          ? null
          : await ctx.collection(principal, query.collection_id, 'collection_id');
      const { total, rows } = await repo.list({
        organisationId: principal.organisationId,
        kind: 'partial',
        workspaceId: workspace?.id,
        collectionId: collection?.id,
        search: query.search,
        status: query.status,
        ...pageWindow(query),
      });
      return { total, data: rows.map(toSummary) };
    },

    async create(principal: Principal, body: CreatePartialBody) {
      await ctx.assertWrite(principal);
      const { workspaceId, collectionId } = await ctx.place(principal, body);
      const slug = body.slug ?? slugify(body.name);
      await checkTemplate(principal, workspaceId, slug, body.string);
      if (await repo.findActiveBySlug(principal.organisationId, 'partial', slug))
        throw new AppError('CONFLICT', `An active partial with slug ${slug} already exists.`, { param: 'slug' });
      const stamp = ctx.now();
      const version = partialVersion(newId(), 1, body.string, body.version_description ?? null, stamp, principal);
      const row: PromptRow = {
        id: version.prompt_id,
        organisation_id: principal.organisationId,
        workspace_id: workspaceId,
        collection_id: collectionId,
        kind: 'partial',
        slug,
        name: body.name,
        status: 'active',
        default_version_id: version.id,
        created_at: stamp,
        last_updated_at: stamp,
      };
      try {
        await repo.insert(row, version);
      } catch (error) {
        if (isUniqueViolation(error))
          throw new AppError('CONFLICT', `The slug ${slug} was taken at the same moment.`, {
            param: 'slug',
            cause: error,
          });
        throw error;
      }
      return { row, version };
    },

    async get(principal: Principal, ref: string): Promise<PartialObject> {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      return toObject(row, await lookup.version(row, null));
    },

    /** A new `string` saves a new version; name and status change in place. */
    async update(principal: Principal, ref: string, body: UpdatePartialBody) {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      await ctx.assertWrite(principal);
      const patch: Partial<PromptRow> = { last_updated_at: ctx.now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.status !== undefined && body.status !== row.status) {
        if (body.status === 'active' && (await repo.findActiveBySlug(row.organisation_id, 'partial', row.slug)))
          throw new AppError('CONFLICT', `An active partial with slug ${row.slug} already exists.`, {
            param: 'status',
          });
        patch.status = body.status;
      }
      let versionId = row.default_version_id;
      if (body.string !== undefined) {
        await checkTemplate(principal, row.workspace_id, row.slug, body.string);
        const version = partialVersion(
          row.id,
          0,
          body.string,
          body.description ?? null,
          patch.last_updated_at!,
          principal,
        );
        const { version: _number, prompt_id: _id, ...rest } = version;
        versionId = (await repo.addVersion(row.id, rest, patch)).id;
      } else {
        await repo.update(row.id, patch);
      }
      return { row: { ...row, ...patch }, versionId };
    },

    async archive(principal: Principal, ref: string): Promise<PromptRow> {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      await ctx.assertWrite(principal);
      if (row.status !== 'archived') await repo.update(row.id, { status: 'archived', last_updated_at: ctx.now() });
      return row;
    },

    async listVersions(principal: Principal, ref: string): Promise<PartialVersionObject[]> {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      return (await repo.listVersions(row.id)).map((version) => ({
        prompt_partial_id: row.id,
        prompt_partial_version_id: version.id,
        slug: row.slug,
        version: version.version,
        string: version.string,
        description: version.description,
        label_id: version.label_id,
        is_default: version.id === row.default_version_id,
        created_at: version.created_at,
        prompt_version_status: version.status,
        object: 'partial' as const,
      }));
    },

    /** As for prompts: a label moves to this version, so that `{{>slug@label}}` includes it. */
    async setVersionLabel(principal: Principal, ref: string, versionRef: string, labelRef: string | null) {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      await ctx.assertWrite(principal);
      const version = await lookup.version(row, versionRef, 'versionId');
      const labelId = labelRef === null ? null : await ctx.visibleLabel(principal, row, labelRef);
      await repo.setVersionLabel(row.id, version.id, labelId);
      await repo.update(row.id, { last_updated_at: ctx.now() });
      return row;
    },

    async makeDefault(principal: Principal, ref: string, versionNumber: number) {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      await ctx.assertWrite(principal);
      const version = await repo.findVersionNumber(row.id, versionNumber);
      if (!version)
        throw new AppError('NOT_FOUND', `Prompt partial version ${versionNumber} not found`, { param: 'version' });
      await repo.update(row.id, { default_version_id: version.id, last_updated_at: ctx.now() });
      return row;
    },
  };
}

export type PartialService = ReturnType<typeof createPartialService>;

function partialVersion(
  partialId: string,
  version: number,
  string: string,
  description: string | null,
  stamp: string,
  principal: Principal,
): PromptVersionRow {
  return {
    id: newId(),
    prompt_id: partialId,
    version,
    string,
    parameters: null,
    model: null,
    virtual_key: null,
    config_id: null,
    functions: null,
    tools: null,
    tool_choice: null,
    template_metadata: null,
    is_raw_template: 1,
    description,
    label_id: null,
    status: 'active',
    created_at: stamp,
    created_by_key_id: principal.keyId,
  };
}

function toSummary(row: PromptRow): PartialSummary {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    collection_id: row.collection_id,
    workspace_id: row.workspace_id,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    status: row.status,
    object: 'partial',
  };
}

function toObject(row: PromptRow, version: PromptVersionRow): PartialObject {
  return {
    ...toSummary(row),
    string: version.string,
    version: version.version,
    version_description: version.description,
    prompt_partial_version_id: version.id,
  };
}
