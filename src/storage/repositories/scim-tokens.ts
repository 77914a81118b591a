import type { Db } from '../database.js';
import type { ScimTokensTable } from '../schema.js';
import { pageOf, type PageWindow } from './paging.js';

export type ScimTokenRow = ScimTokensTable;

/** The tokens identity providers call the SCIM routes with; only hashes are stored. */
export function createScimTokenRepository(db: Db) {
  return {
    insert: (row: ScimTokenRow) => db.insertInto('scim_tokens').values(row).execute(),

    findByHash: (tokenHash: string) =>
      db.selectFrom('scim_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst(),

    findById: (organisationId: string, id: string) =>
      db
        .selectFrom('scim_tokens')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    list: (organisationId: string, page: PageWindow) =>
      pageOf(
        db.selectFrom('scim_tokens').where('organisation_id', '=', organisationId),
        (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'),
        page,
      ),

    revoke: (id: string, stamp: string) =>
      db
        .updateTable('scim_tokens')
        .set({ status: 'revoked', revoked_at: stamp, last_updated_at: stamp })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .execute(),
  };
}

export type ScimTokenRepository = ReturnType<typeof createScimTokenRepository>;
