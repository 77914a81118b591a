import { sql } from 'kysely';
import type { Db } from '../database.js';
import type { PromptCollectionsTable, PromptLabelsTable, PromptsTable, PromptVersionsTable } from '../schema.js';
import { nextVersionNumber } from './versions.js';
import { pageOf } from './paging.js';

export type PromptRow = PromptsTable;
export type PromptVersionRow = PromptVersionsTable;
export type PromptKind = PromptRow['kind'];
export type CollectionRow = PromptCollectionsTable;
export type LabelRow = PromptLabelsTable;

export interface PromptFilter {
  organisationId: string;
  kind: PromptKind;
  workspaceId?: string | undefined;
  collectionId?: string | undefined;
  search?: string | undefined;
  status?: PromptRow['status'] | undefined;
  limit: number;
  offset: number;
}

export interface CollectionFilter {
  organisationId: string;
  workspaceId: string;
  search?: string | undefined;
  limit: number;
  offset: number;
}

export interface LabelFilter {
  organisationId: string;
  /** Only organisation labels and this workspace's; undefined: every label of the organisation. */
  workspaceId?: string | undefined;
  search?: string | undefined;
  limit: number;
  offset: number;
}

/** `search` matches anywhere in the name or slug, case-insensitively; LIKE wildcards are literal. */
const likePattern = (search: string) => `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** SQL of prompts, partials, their versions, collections and labels. */
export function createPromptRepository(db: Db) {
  return {
    // ---- prompts and partials ----

    /** Inserts a prompt (or partial) with its first version in one transaction. */
    insert: (row: PromptRow, version: PromptVersionRow) =>
      db.transaction().execute(async (trx) => {
        await trx.insertInto('prompts').values(row).execute();
        await trx.insertInto('prompt_versions').values(version).execute();
      }),

    findById: (organisationId: string, kind: PromptKind, id: string) =>
      db
        .selectFrom('prompts')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('kind', '=', kind)
        .where('id', '=', id)
        .executeTakeFirst(),

    /** The active one with this slug, or else the most recently changed archived one. */
    findBySlug: (organisationId: string, kind: PromptKind, slug: string) =>
      db
        .selectFrom('prompts')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('kind', '=', kind)
        .where('slug', '=', slug)
        .orderBy((eb) => eb.case().when('status', '=', 'active').then(0).else(1).end())
        .orderBy('last_updated_at', 'desc')
        .executeTakeFirst(),

    findActiveBySlug: (organisationId: string, kind: PromptKind, slug: string) =>
      db
        .selectFrom('prompts')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('kind', '=', kind)
        .where('slug', '=', slug)
        .where('status', '=', 'active')
        .executeTakeFirst(),

    /** A page of prompts (or partials), each with the model of its default version. */
    list: async (filter: PromptFilter) => {
      let query = db
        .selectFrom('prompts')
        .innerJoin('prompt_versions as v', 'v.id', 'prompts.default_version_id')
        .where('prompts.organisation_id', '=', filter.organisationId)
        .where('prompts.kind', '=', filter.kind);
      if (filter.workspaceId) query = query.where('prompts.workspace_id', '=', filter.workspaceId);
      if (filter.collectionId) query = query.where('prompts.collection_id', '=', filter.collectionId);
      if (filter.status) query = query.where('prompts.status', '=', filter.status);
      if (filter.search) {
        const pattern = likePattern(filter.search);
        query = query.where((eb) =>
          eb.or([
            eb(eb.fn('lower', ['prompts.name']), 'like', sql<string>`${pattern} escape '\\'`),
            eb(eb.fn('lower', ['prompts.slug']), 'like', sql<string>`${pattern} escape '\\'`),
          ]),
        );
      }
      return pageOf(
        query,
        (q) =>
          q
            .selectAll('prompts')
            .select(['v.model as model', 'v.version as version'])
            .orderBy('prompts.created_at', 'asc')
            .orderBy('prompts.id'),
        filter,
      );
    },

    update: (id: string, patch: Partial<PromptRow>) =>
      db.updateTable('prompts').set(patch).where('id', '=', id).execute(),

    /** Adds a version numbered after the highest one so far; `patch` changes the prompt row too. */
    addVersion: (
      promptId: string,
      version: Omit<PromptVersionRow, 'version' | 'prompt_id'>,
      patch: Partial<PromptRow>,
    ) =>
      db.transaction().execute(async (trx) => {
        const row: PromptVersionRow = {
          ...version,
          prompt_id: promptId,
          version: await nextVersionNumber(trx, 'prompt_versions', promptId),
        };
        await trx.insertInto('prompt_versions').values(row).execute();
        await trx.updateTable('prompts').set(patch).where('id', '=', promptId).execute();
        return row;
      }),

    findVersion: (promptId: string, versionId: string) =>
      db
        .selectFrom('prompt_versions')
        .selectAll()
        .where('prompt_id', '=', promptId)
        .where('id', '=', versionId)
        .executeTakeFirst(),

    findVersionNumber: (promptId: string, version: number) =>
      db
        .selectFrom('prompt_versions')
        .selectAll()
        .where('prompt_id', '=', promptId)
        .where('version', '=', version)
        .executeTakeFirst(),

    latestVersion: (promptId: string) =>
      db
        .selectFrom('prompt_versions')
        .selectAll()
        .where('prompt_id', '=', promptId)
        .orderBy('version', 'desc')
        .limit(1)
        .executeTakeFirst(),

    versionWithLabel: (promptId: string, labelId: string) =>
      db
        .selectFrom('prompt_versions')
        .selectAll()
        .where('prompt_id', '=', promptId)
        .where('label_id', '=', labelId)
        .executeTakeFirst(),

    /** Versions newest first. */
    listVersions: (promptId: string) =>
      db
        .selectFrom('prompt_versions')
        .selectAll()
        .where('prompt_id', '=', promptId)
        .orderBy('version', 'desc')
        .execute(),

    /** Puts `labelId` on one version of a prompt (taking it off any other of its versions), or takes it off. */
    setVersionLabel: (promptId: string, versionId: string, labelId: string | null) =>
      db.transaction().execute(async (trx) => {
        if (labelId !== null)
          await trx
            .updateTable('prompt_versions')
            .set({ label_id: null })
            .where('prompt_id', '=', promptId)
            .where('label_id', '=', labelId)
            .execute();
        await trx
          .updateTable('prompt_versions')
          .set({ label_id: labelId })
          .where('prompt_id', '=', promptId)
          .where('id', '=', versionId)
          .execute();
      }),

    // ---- collections ----

    insertCollection: (row: CollectionRow) => db.insertInto('prompt_collections').values(row).execute(),

    /** The default collection of a workspace, made when first needed (concurrent first uses make one). */
    ensureDefaultCollection: async (row: CollectionRow): Promise<CollectionRow> => {
      await db
        .insertInto('prompt_collections')
        .values(row)
        .onConflict((oc) => oc.column('workspace_id').where(sql.ref('is_default'), '=', sql.lit(1)).doNothing())
        .execute();
      return db
        .selectFrom('prompt_collections')
        .selectAll()
        .where('workspace_id', '=', row.workspace_id)
        .where('is_default', '=', 1)
        .executeTakeFirstOrThrow();
    },

    findDefaultCollection: (workspaceId: string) =>
      db
        .selectFrom('prompt_collections')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('is_default', '=', 1)
        .executeTakeFirst(),

    findCollection: (organisationId: string, id: string) =>
      db
        .selectFrom('prompt_collections')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    findActiveCollectionBySlug: (organisationId: string, slug: string) =>
      db
        .selectFrom('prompt_collections')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('slug', '=', slug)
        .where('status', '=', 'active')
        .executeTakeFirst(),

    listCollections: async (filter: CollectionFilter) => {
      let query = db
        .selectFrom('prompt_collections')
        .where('organisation_id', '=', filter.organisationId)
        .where('workspace_id', '=', filter.workspaceId)
        .where('status', '=', 'active');
      if (filter.search) {
        const pattern = likePattern(filter.search);
        query = query.where((eb) => eb(eb.fn('lower', ['name']), 'like', sql<string>`${pattern} escape '\\'`));
      }
      return pageOf(
        query,
        (q) => q.selectAll().orderBy('is_default', 'desc').orderBy('created_at', 'asc').orderBy('id'),
        filter,
      );
    },

    childCollections: (parentId: string) =>
      db
        .selectFrom('prompt_collections')
        .selectAll()
        .where('parent_collection_id', '=', parentId)
        .where('status', '=', 'active')
        .orderBy('created_at', 'asc')
        .execute(),

    /** Counts and last changes of a collection's active children and prompts (partials included). */
    collectionDetails: async (collectionId: string) => {
      const children = await db
        .selectFrom('prompt_collections')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('last_updated_at').as('last')])
        .where('parent_collection_id', '=', collectionId)
        .where('status', '=', 'active')
        .executeTakeFirstOrThrow();
      const prompts = await db
        .selectFrom('prompts')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('last_updated_at').as('last')])
        .where('collection_id', '=', collectionId)
        .where('status', '=', 'active')
        .executeTakeFirstOrThrow();
      return {
        child_collections_count: Number(children.n),
        prompts_count: Number(prompts.n),
        child_collections_last_updated_at: (children.last as string | null) ?? null,
        prompts_last_updated_at: (prompts.last as string | null) ?? null,
      };
    },

    updateCollection: (id: string, patch: Partial<CollectionRow>) =>
      db.updateTable('prompt_collections').set(patch).where('id', '=', id).execute(),

    // ---- labels ----

    insertLabel: (row: LabelRow) => db.insertInto('prompt_labels').values(row).execute(),

    /** Makes the universal labels of an organisation if they are not there yet. */
    ensureUniversalLabels: async (rows: LabelRow[]): Promise<void> => {
      for (const row of rows)
        await db
          .insertInto('prompt_labels')
          .values(row)
          .onConflict((oc) =>
            oc.columns(['organisation_id', 'name']).where(sql.ref('is_universal'), '=', sql.lit(1)).doNothing(),
          )
          .execute();
    },

    findLabel: (organisationId: string, id: string) =>
      db
        .selectFrom('prompt_labels')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    /** Active labels with this name that a workspace sees: the organisation's and the workspace's own. */
    findVisibleLabelsByName: (organisationId: string, workspaceId: string | null, name: string) =>
      db
        .selectFrom('prompt_labels')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('name', '=', name)
        .where('status', '=', 'active')
        .where((eb) =>
          workspaceId === null
            ? eb('workspace_id', 'is', null)
            : eb.or([eb('workspace_id', 'is', null), eb('workspace_id', '=', workspaceId)]),
        )
        .execute(),

    /** Active labels with this name anywhere in the organisation. */
    findLabelsByName: (organisationId: string, name: string) =>
      db
        .selectFrom('prompt_labels')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('name', '=', name)
        .where('status', '=', 'active')
        .execute(),

    listLabels: async (filter: LabelFilter) => {
      let query = db
        .selectFrom('prompt_labels')
        .where('organisation_id', '=', filter.organisationId)
        .where('status', '=', 'active');
      const workspaceId = filter.workspaceId;
      if (workspaceId !== undefined)
        query = query.where((eb) => eb.or([eb('workspace_id', 'is', null), eb('workspace_id', '=', workspaceId)]));
      if (filter.search) {
        const pattern = likePattern(filter.search);
        query = query.where((eb) => eb(eb.fn('lower', ['name']), 'like', sql<string>`${pattern} escape '\\'`));
      }
      return pageOf(
        query,
        (q) => q.selectAll().orderBy('is_universal', 'desc').orderBy('created_at', 'asc').orderBy('name').orderBy('id'),
        filter,
      );
    },

    updateLabel: (id: string, patch: Partial<LabelRow>) =>
      db.updateTable('prompt_labels').set(patch).where('id', '=', id).execute(),

    /** Archives a label and takes it off every version that carries it. */
    archiveLabel: (id: string, now: string) =>
      db.transaction().execute(async (trx) => {
        await trx.updateTable('prompt_versions').set({ label_id: null }).where('label_id', '=', id).execute();
        await trx
          .updateTable('prompt_labels')
          .set({ status: 'archived', last_updated_at: now })
          .where('id', '=', id)
          .execute();
      }),
  };
}

export type PromptRepository = ReturnType<typeof createPromptRepository>;
