import { sql } from 'kysely';
import type { Db } from '../database.js';
import type { CredentialStatus, IntegrationsTable, ProvidersTable } from '../schema.js';
import { isUuid } from '../../lib/ids.js';
import { pageOf } from './paging.js';

export type IntegrationRow = IntegrationsTable;

/** Tag filters match every pair given; tags are JSON text, so the match runs here, not in SQL. */
export type TagFilter = Readonly<Record<string, string>>;

export function matchesTags(storedTags: string, filter: TagFilter | undefined): boolean {
  if (!filter) return true;
  const tags = JSON.parse(storedTags) as Record<string, string>;
  return Object.entries(filter).every(([key, value]) => Object.hasOwn(tags, key) && tags[key] === value);
}

/** Kept here for the services that import it from this module; see unique-violation.ts. */
export { isUniqueViolation } from '../unique-violation.js';

/** Active rows first, then the newest archived one: what a slug names once it has been reused. */
export const activeFirst = (column: string) => sql<number>`case when ${sql.ref(column)} = 'active' then 0 else 1 end`;

/** Applies a tag filter and a page window to rows already in creation order. */
export function pageByTags<T extends { tags: string }>(
  rows: T[],
  filter: TagFilter | undefined,
  window: { limit: number; offset: number },
) {
  const matching = rows.filter((row) => matchesTags(row.tags, filter));
  return { total: matching.length, rows: matching.slice(window.offset, window.offset + window.limit) };
}

export function createIntegrationRepository(db: Db) {
  return {
    /** Every row's stored configurations, archived ones included (sealing fields stored in clear). */
    allConfigurations: () => db.selectFrom('integrations').select(['id', 'configurations']).execute(),

    setConfigurations: (id: string, configurations: string) =>
      db.updateTable('integrations').set({ configurations }).where('id', '=', id).execute(),

    /** The integration and, when given, its default provider, in one transaction. */
    insertWithDefaultProvider: (integration: IntegrationRow, provider: ProvidersTable | null) =>
      db.transaction().execute(async (trx) => {
        await trx.insertInto('integrations').values(integration).execute();
        if (provider) await trx.insertInto('providers').values(provider).execute();
      }),

    findByIdOrSlug: (organisationId: string, idOrSlug: string) =>
      db
        .selectFrom('integrations')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where(isUuid(idOrSlug) ? 'id' : 'slug', '=', idOrSlug)
        .orderBy(activeFirst('status'))
        .orderBy('created_at', 'desc')
        .executeTakeFirst(),

    slugTaken: async (organisationId: string, slug: string) =>
      (await db
        .selectFrom('integrations')
        .select('id')
        .where('organisation_id', '=', organisationId)
        .where('slug', '=', slug)
        .where('status', '=', 'active')
        .executeTakeFirst()) !== undefined,

    list: async (filter: {
      organisationId: string;
      status: CredentialStatus;
      tags?: TagFilter;
      limit: number;
      offset: number;
    }) => {
      const query = db
        .selectFrom('integrations')
        .where('organisation_id', '=', filter.organisationId)
        .where('status', '=', filter.status);
      if (filter.tags)
        return pageByTags(
          await query.selectAll().orderBy('created_at', 'asc').orderBy('id').execute(),
          filter.tags,
          filter,
        );
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), filter);
    },

    update: (id: string, patch: Partial<IntegrationRow>) =>
      db.updateTable('integrations').set(patch).where('id', '=', id).execute(),

    /** Archives the integration and every provider built on it, so that none resolves any more. */
    archiveWithProviders: (id: string, stamp: string) =>
      db.transaction().execute(async (trx) => {
        await trx
          .updateTable('integrations')
          .set({ status: 'archived', last_updated_at: stamp })
          .where('id', '=', id)
          .execute();
        await trx
          .updateTable('providers')
          .set({ status: 'archived', last_updated_at: stamp })
          .where('integration_id', '=', id)
          .where('status', '=', 'active')
          .execute();
      }),

    /** The organisation's default workspace, where credentials go when no workspace is named. */
    findDefaultWorkspace: (organisationId: string) =>
      db
        .selectFrom('workspaces')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('is_default', '=', 1)
        .executeTakeFirst(),
  };
}

export type IntegrationRepository = ReturnType<typeof createIntegrationRepository>;
