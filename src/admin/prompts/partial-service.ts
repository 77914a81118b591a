import type { Principal } from '../../auth/principal.js';
import { AppError } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import { parsedTemplates, partialsOf } from '../../prompts/index.js';
import type { PromptRow, PromptVersionRow } from '../../storage/repositories/prompts.js';
import type { PromptContext, PromptDeps } from './context.js';
import { createTemplateLifecycle } from './template-lifecycle.js';
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

  const lifecycle = createTemplateLifecycle(deps, ctx, 'partial');
  const { find, writable } = lifecycle;

  return {
    async list(principal: Principal, query: ListPartialsQuery) {
      const { total, rows } = await lifecycle.list(principal, query);
      return { total, data: rows.map(toSummary) };
    },

    async create(principal: Principal, body: CreatePartialBody) {
      await ctx.assertWrite(principal);
      const placement = await ctx.place(principal, body);
      const slug = body.slug ?? slugify(body.name);
      await checkTemplate(principal, placement.workspaceId, slug, body.string);
      await lifecycle.assertSlugFree(principal.organisationId, slug);
      const version = partialVersion(newId(), 1, body.string, body.version_description ?? null, ctx.now(), principal);
      const row = await lifecycle.insert(principal, placement, { slug, name: body.name }, version);
      return { row, version };
    },

    async get(principal: Principal, ref: string): Promise<PartialObject> {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      return toObject(row, await lookup.version(row, null));
    },

    /** A new `string` saves a new version; name and status change in place. */
    async update(principal: Principal, ref: string, body: UpdatePartialBody) {
      const row = await writable(principal, ref);
      const patch: Partial<PromptRow> = { last_updated_at: ctx.now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.status !== undefined && body.status !== row.status) {
        if (body.status === 'active') await lifecycle.assertSlugFree(row.organisation_id, row.slug, 'status');
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

    archive: lifecycle.archive,

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
    setVersionLabel: lifecycle.setVersionLabel,
    makeDefault: lifecycle.makeDefault,
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
