import type { Db } from '../database.js';
import type { CredentialStatus, ProvidersTable } from '../schema.js';
import { isUuid } from '../../lib/ids.js';
import { activeFirst, pageByTags, type TagFilter } from './integrations.js';
import { integrationEnabledIn } from './integration-workspaces.js';

export type ProviderRow = ProvidersTable;

/** A provider with the provider type of its integration, which is what people look for. */
export interface ProviderWithType extends ProviderRow {
  ai_provider_id: string;
}

export function createProviderRepository(db: Db) {
  const withType = () =>
    db
      .selectFrom('providers as p')
      .innerJoin('integrations as i', 'i.id', 'p.integration_id')
      .selectAll('p')
      .select('i.ai_provider_id');

  return {
    insert: (row: ProviderRow) => db.insertInto('providers').values(row).execute(),

    /** By id anywhere in the organisation, or by slug within one workspace. */
    findByIdOrSlug: (
      organisationId: string,
      workspaceId: string,
      idOrSlug: string,
    ): Promise<ProviderWithType | undefined> => {
      let query = withType().where('p.organisation_id', '=', organisationId);
      query = isUuid(idOrSlug)
        ? query.where('p.id', '=', idOrSlug)
        : query.where('p.workspace_id', '=', workspaceId).where('p.slug', '=', idOrSlug);
      return query.orderBy(activeFirst('p.status')).orderBy('p.created_at', 'desc').executeTakeFirst();
    },

    /** Whether some workspace of the organisation has an active provider with this slug. */
    activeSlugInOrganisation: async (organisationId: string, slug: string) =>
      (await db
        .selectFrom('providers')
        .select('id')
        .where('organisation_id', '=', organisationId)
        .where('slug', '=', slug)
        .where('status', '=', 'active')
        .executeTakeFirst()) !== undefined,

    /** Whether the workspace has an active provider made from the integration. */
    hasActiveOfIntegration: async (workspaceId: string, integrationId: string) =>
      (await db
        .selectFrom('providers')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('integration_id', '=', integrationId)
        .where('status', '=', 'active')
        .executeTakeFirst()) !== undefined,

    slugTaken: async (workspaceId: string, slug: string) =>
      (await db
        .selectFrom('providers')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('slug', '=', slug)
        .where('status', '=', 'active')
        .executeTakeFirst()) !== undefined,

    list: async (filter: {
      organisationId: string;
      workspaceId?: string;
      status: CredentialStatus;
      tags?: TagFilter;
      limit: number;
      offset: number;
    }) => {
      let query = withType()
        .where('p.organisation_id', '=', filter.organisationId)
        .where('p.status', '=', filter.status);
      if (filter.workspaceId) query = query.where('p.workspace_id', '=', filter.workspaceId);
      const ordered = query.orderBy('p.created_at', 'asc').orderBy('p.id');
      if (filter.tags) return pageByTags(await ordered.execute(), filter.tags, filter);
      const countQuery = db
        .selectFrom('providers')
        .where('organisation_id', '=', filter.organisationId)
        .where('status', '=', filter.status);
      const counted = filter.workspaceId ? countQuery.where('workspace_id', '=', filter.workspaceId) : countQuery;
      const { total } = await counted.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await ordered.limit(filter.limit).offset(filter.offset).execute();
      return { total: Number(total), rows };
    },

    update: (id: string, patch: Partial<ProviderRow>) =>
      db.updateTable('providers').set(patch).where('id', '=', id).execute(),

    /**
     * The gateway's lookup: an active provider of the workspace with what it needs of its
     * integration, when the integration may be used in that workspace.
     */
    findActiveForGateway: (organisationId: string, workspaceId: string, slug: string) =>
      db
        .selectFrom('providers as p')
        .innerJoin('integrations as i', 'i.id', 'p.integration_id')
        .select([
          'p.id',
          'p.slug',
          'p.name',
          'p.workspace_id',
          'p.created_at',
          'p.expires_at',
          'p.rate_limits',
          'p.usage_limits',
          'p.integration_id',
          'i.slug as integration_slug',
          'i.ai_provider_id',
          'i.encrypted_key',
          'i.configurations',
          'i.status as integration_status',
          'i.allow_all_models',
          'i.secret_mappings',
        ])
        .where('p.organisation_id', '=', organisationId)
        .where('p.workspace_id', '=', workspaceId)
        .where('p.slug', '=', slug)
        .where('p.status', '=', 'active')
        .where(integrationEnabledIn('p.workspace_id'))
        .executeTakeFirst(),

    /** Every active provider of a workspace whose integration is active and enabled there: what `GET /v1/models` lists. */
    listActiveForGateway: (organisationId: string, workspaceId: string) =>
      db
        .selectFrom('providers as p')
        .innerJoin('integrations as i', 'i.id', 'p.integration_id')
        .select(['p.slug', 'p.created_at', 'p.integration_id', 'i.ai_provider_id', 'i.allow_all_models'])
        .where('p.organisation_id', '=', organisationId)
        .where('p.workspace_id', '=', workspaceId)
        .where('p.status', '=', 'active')
        .where('i.status', '=', 'active')
        .where(integrationEnabledIn('p.workspace_id'))
        .orderBy('p.slug')
        .execute(),
  };
}

export type ProviderRepository = ReturnType<typeof createProviderRepository>;
