import type { Principal } from '../../auth/principal.js';
import { AppError, invalid } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import type { CollectionRow } from '../../storage/repositories/prompts.js';
import { pageWindow } from '../shared/pagination.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import type {
  CollectionObject,
  CollectionWithChildren,
  CreateCollectionBody,
  ListCollectionsQuery,
} from './catalog-schemas.js';
import type { PromptContext, PromptDeps } from './context.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';

/**
 * Prompt collections: folders of one workspace, nested by `parent_collection_id`. Every
 * workspace has a default collection (made when first needed), which cannot be deleted.
 */
export function createCollectionService(deps: PromptDeps, ctx: PromptContext) {
  const { repo } = deps;

  async function toObject(row: CollectionRow): Promise<CollectionObject> {
    return {
      id: row.id,
      name: row.name,
      slug: row.slug,
      workspace_id: row.workspace_id,
      parent_collection_id: row.parent_collection_id,
      is_default: row.is_default === 1,
      status: row.status,
      created_at: row.created_at,
      last_updated_at: row.last_updated_at,
      collection_details: await repo.collectionDetails(row.id),
      object: 'collection',
    };
  }

  return {
    async list(principal: Principal, query: ListCollectionsQuery) {
      await ctx.assertView(principal);
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: true });
      await ctx.defaultCollection(workspace!);
      const { total, rows } = await repo.listCollections({
        organisationId: principal.organisationId,
        workspaceId: workspace!.id,
        search: query.search,
        ...pageWindow(query),
      });
      return { total, data: await Promise.all(rows.map(toObject)) };
    },

    async create(principal: Principal, body: CreateCollectionBody): Promise<CollectionRow> {
      await ctx.assertWrite(principal);
      const parent =
        body.parent_collection_id === undefined || body.parent_collection_id === null
          ? null
          : await ctx.collection(principal, body.parent_collection_id, 'parent_collection_id');
      const workspace =
        (await resolveWorkspace(deps.workspaces, principal, body.workspace_id, { required: false })) ??
        (parent ? null : await deps.workspaces.findDefault(principal.organisationId));
      if (parent && workspace && parent.workspace_id !== workspace.id)
        throw invalid('parent_collection_id', 'The parent collection belongs to another workspace than workspace_id.');
      const workspaceId = parent?.workspace_id ?? workspace?.id;
      if (!workspaceId) throw invalid('workspace_id', 'workspace_id is required.');
      const slug = body.slug ?? slugify(body.name);
      if (await repo.findActiveCollectionBySlug(principal.organisationId, slug))
        throw new AppError('CONFLICT', `An active collection with slug ${slug} already exists.`, { param: 'slug' });
      const stamp = ctx.now();
      const row: CollectionRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspaceId,
        slug,
        name: body.name,
        parent_collection_id: parent?.id ?? null,
        is_default: 0,
        status: 'active',
        created_at: stamp,
        last_updated_at: stamp,
      };
      await insertUnique(() => repo.insertCollection(row), slugTaken(slug));
      return row;
    },

    async get(principal: Principal, ref: string): Promise<CollectionWithChildren> {
      await ctx.assertView(principal);
      const row = await ctx.collection(principal, ref, 'collectionId');
      const children = await repo.childCollections(row.id);
      return {
        ...(await toObject(row)),
        child_collections: await Promise.all(
          children.map(async (child) => ({
            id: child.id,
            name: child.name,
            slug: child.slug,
            last_updated_at: child.last_updated_at,
            collection_details: await repo.collectionDetails(child.id),
          })),
        ),
      };
    },

    async rename(principal: Principal, ref: string, name: string): Promise<CollectionRow> {
      await ctx.assertView(principal);
      const row = await ctx.collection(principal, ref, 'collectionId');
      await ctx.assertWrite(principal);
      await repo.updateCollection(row.id, { name, last_updated_at: ctx.now() });
      return row;
    },

    /** Archives an empty collection; the default one, or one holding prompts or collections, stays (409). */
    async archive(principal: Principal, ref: string): Promise<CollectionRow> {
      await ctx.assertView(principal);
      const row = await ctx.collection(principal, ref, 'collectionId');
      await ctx.assertWrite(principal);
      if (row.is_default === 1)
        throw new AppError('CONFLICT', 'The default collection of a workspace cannot be deleted.', {
          param: 'collectionId',
        });
      const details = await repo.collectionDetails(row.id);
      if (details.prompts_count > 0 || details.child_collections_count > 0)
        throw new AppError(
          'CONFLICT',
          `The collection still holds ${details.prompts_count} prompt(s) or partial(s) and ${details.child_collections_count} collection(s); move or delete them first.`,
          { param: 'collectionId' },
        );
      await repo.updateCollection(row.id, { status: 'archived', last_updated_at: ctx.now() });
      return row;
    },
  };
}

export type CollectionService = ReturnType<typeof createCollectionService>;
