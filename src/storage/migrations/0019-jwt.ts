import type { Kysely } from 'kysely';

/**
 * JWT authentication: one settings row per organisation (`settings` is JSON: the JWKS URL,
 * audience, claim names, …), found by the token's issuer, which is therefore unique. Audit
 * records gain `detail`: why an authentication was refused (never the token itself).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('jwt_settings')
    .addColumn('organisation_id', 'text', (c) => c.primaryKey())
    .addColumn('issuer', 'text', (c) => c.notNull().unique())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('audit_logs').addColumn('detail', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_logs').dropColumn('detail').execute();
  await db.schema.dropTable('jwt_settings').execute();
}
