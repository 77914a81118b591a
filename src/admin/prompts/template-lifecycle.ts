import type { Principal } from '../../auth/principal.js';
import { AppError } from '../../lib/errors.js';
import type { PromptKind, PromptRow, PromptVersionRow } from '../../storage/repositories/prompts.js';
import { pageWindow } from '../shared/pagination.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import type { PromptContext, PromptDeps } from './context.js';
import type { ListPartialsQuery, ListPromptsQuery } from './schemas.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';

/** The list filters prompts and partials share (their query schemas are the same). */
export type TemplateListQuery = ListPromptsQuery | ListPartialsQuery;

const NOUNS: Record<PromptKind, { one: string; version: string }> = {
  prompt: { one: 'prompt', version: 'Prompt version' },
  partial: { one: 'partial', version: 'Prompt partial version' },
};

/**
 * The life prompts and partials share (they live in one table, told apart by `kind`): listing,
 * creating with a free slug, archiving, labelling a version and choosing the default version.
 * What makes a version differs between them and stays in their own services.
 */
export function createTemplateLifecycle(deps: PromptDeps, ctx: PromptContext, kind: PromptKind) {
  const { repo, lookup } = deps;
  const nouns = NOUNS[kind];

  const find = (principal: Principal, ref: string) => lookup.find(principal, kind, ref);

  /** The row the caller may change: seeing it is checked before the write right, so a hidden one is a 404. */
  async function writable(principal: Principal, ref: string): Promise<PromptRow> {
    await ctx.assertView(principal);
    const row = await find(principal, ref);
    await ctx.assertWrite(principal);
    return row;
  }

  async function assertSlugFree(organisationId: string, slug: string, param = 'slug'): Promise<void> {
    if (await repo.findActiveBySlug(organisationId, kind, slug))
      throw new AppError('CONFLICT', `An active ${nouns.one} with slug ${slug} already exists.`, { param });
  }

  return {
    find,
    writable,
    assertSlugFree,

    list: async (principal: Principal, query: TemplateListQuery) => {
      await ctx.assertView(principal);
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const collection =
        query.collection_id === undefined
          ? null
          : await ctx.collection(principal, query.collection_id, 'collection_id');
      return repo.list({
        organisationId: principal.organisationId,
        kind,
        workspaceId: workspace?.id,
        collectionId: collection?.id,
        search: query.search,
        status: query.status,
        ...pageWindow(query),
      });
    },

    /** Places and stores a new prompt or partial with its first version (the default one). */
    insert: async (
      principal: Principal,
      placement: { workspaceId: string; collectionId: string },
      fields: { slug: string; name: string },
      version: PromptVersionRow,
    ): Promise<PromptRow> => {
      const row: PromptRow = {
        id: version.prompt_id,
        organisation_id: principal.organisationId,
        workspace_id: placement.workspaceId,
        collection_id: placement.collectionId,
        kind,
        slug: fields.slug,
        name: fields.name,
        status: 'active',
        default_version_id: version.id,
        created_at: version.created_at,
        last_updated_at: version.created_at,
      };
      await insertUnique(() => repo.insert(row, version), slugTaken(fields.slug));
      return row;
    },

    /** Deleting archives: the slug is free again, runs no longer find it, and it stays readable by id. */
    archive: async (principal: Principal, ref: string): Promise<PromptRow> => {
      const row = await writable(principal, ref);
      if (row.status !== 'archived') await repo.update(row.id, { status: 'archived', last_updated_at: ctx.now() });
      return row;
    },

    /** Versions are immutable but for their label, which moves here from any other version. */
    setVersionLabel: async (principal: Principal, ref: string, versionRef: string, labelRef: string | null) => {
      const row = await writable(principal, ref);
      const version = await lookup.version(row, versionRef, 'versionId');
      const labelId = labelRef === null ? null : await ctx.visibleLabel(principal, row, labelRef);
      await repo.setVersionLabel(row.id, version.id, labelId);
      await repo.update(row.id, { last_updated_at: ctx.now() });
      return row;
    },

    makeDefault: async (principal: Principal, ref: string, versionNumber: number) => {
      const row = await writable(principal, ref);
      const version = await repo.findVersionNumber(row.id, versionNumber);
      if (!version)
        throw new AppError('NOT_FOUND', `${nouns.version} ${versionNumber} not found`, { param: 'version' });
      await repo.update(row.id, { default_version_id: version.id, last_updated_at: ctx.now() });
      return row;
    },
  };
}

export type TemplateLifecycle = ReturnType<typeof createTemplateLifecycle>;
