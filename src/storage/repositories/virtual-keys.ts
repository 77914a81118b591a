import type { Db } from '../database.js';
import type { CredentialStatus, VirtualKeysTable } from '../schema.js';
import { isUuid } from '../../lib/ids.js';
import { activeFirst } from './integrations.js';
import { pageOf } from './paging.js';

export type VirtualKeyRow = VirtualKeysTable;

export function createVirtualKeyRepository(db: Db) {
  return {
    /** Every row's stored configurations, archived ones included (sealing fields stored in clear). */
    allConfigurations: () => db.selectFrom('virtual_keys').select(['id', 'configurations']).execute(),

    setConfigurations: (id: string, configurations: string) =>
      db.updateTable('virtual_keys').set({ configurations }).where('id', '=', id).execute(),

    insert: (row: VirtualKeyRow) => db.insertInto('virtual_keys').values(row).execute(),

    /** Slugs are unique in the organisation (among active keys), so no workspace is needed. */
    findByIdOrSlug: (organisationId: string, idOrSlug: string) =>
      db
        .selectFrom('virtual_keys')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where(isUuid(idOrSlug) ? 'id' : 'slug', '=', idOrSlug)
        .orderBy(activeFirst('status'))
        .orderBy('created_at', 'desc')
        .executeTakeFirst(),

    slugTaken: async (organisationId: string, slug: string) =>
      (await db
        .selectFrom('virtual_keys')
        .select('id')
        .where('organisation_id', '=', organisationId)
        .where('slug', '=', slug)
        .where('status', '=', 'active')
        .executeTakeFirst()) !== undefined,

    list: async (filter: {
      organisationId: string;
      workspaceId?: string;
      status: CredentialStatus;
      limit: number;
      offset: number;
    }) => {
      let query = db
        .selectFrom('virtual_keys')
        .where('organisation_id', '=', filter.organisationId)
        .where('status', '=', filter.status);
      if (filter.workspaceId) query = query.where('workspace_id', '=', filter.workspaceId);
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), filter);
    },

    update: (id: string, patch: Partial<VirtualKeyRow>) =>
      db.updateTable('virtual_keys').set(patch).where('id', '=', id).execute(),

    findActiveBySlug: (organisationId: string, slug: string) =>
      db
        .selectFrom('virtual_keys')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('slug', '=', slug)
        .where('status', '=', 'active')
        .executeTakeFirst(),
  };
}

export type VirtualKeyRepository = ReturnType<typeof createVirtualKeyRepository>;
