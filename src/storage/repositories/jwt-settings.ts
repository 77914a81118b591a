import type { Db } from '../database.js';
import type { JwtSettingsTable } from '../schema.js';

export type JwtSettingsRow = JwtSettingsTable;

/** Each organisation's JWT authentication settings (at most one row each). */
export function createJwtSettingsRepository(db: Db) {
  return {
    find: (organisationId: string) =>
      db.selectFrom('jwt_settings').selectAll().where('organisation_id', '=', organisationId).executeTakeFirst(),

    /** The organisation whose tokens carry this `iss`. */
    findByIssuer: (issuer: string) =>
      db.selectFrom('jwt_settings').selectAll().where('issuer', '=', issuer).executeTakeFirst(),

    /** The organisation that already uses `issuer`, other than `organisationId`. */
    issuerTakenBy: async (issuer: string, organisationId: string): Promise<boolean> =>
      (await db
        .selectFrom('jwt_settings')
        .select('organisation_id')
        .where('issuer', '=', issuer)
        .where('organisation_id', '!=', organisationId)
        .executeTakeFirst()) !== undefined,

    upsert: (row: JwtSettingsRow) =>
      db
        .insertInto('jwt_settings')
        .values(row)
        .onConflict((oc) =>
          oc
            .column('organisation_id')
            .doUpdateSet({ issuer: row.issuer, settings: row.settings, last_updated_at: row.last_updated_at }),
        )
        .execute(),

    remove: async (organisationId: string): Promise<boolean> => {
      const result = await db
        .deleteFrom('jwt_settings')
        .where('organisation_id', '=', organisationId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** The one organisation of a server that has only one (how most run), for records no token attributes. */
    soleOrganisationId: async (): Promise<string | null> => {
      const rows = await db.selectFrom('organisations').select('id').limit(2).execute();
      return rows.length === 1 ? rows[0]!.id : null;
    },
  };
}

export type JwtSettingsRepository = ReturnType<typeof createJwtSettingsRepository>;
