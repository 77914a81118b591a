import type { Kysely } from 'kysely';

/**
 * The country an audited request came from, as the proxy or CDN in front of svcgw named it
 * (`cf-ipcountry` or `x-country`), so that audit logs filter by `country` as the reference's do.
 * Records written before have none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_logs').addColumn('country', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_logs').dropColumn('country').execute();
}
