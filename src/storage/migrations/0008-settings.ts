import type { Kysely } from 'kysely';

/**
 * Security settings: one row for the organisation and one per workspace that overrides it.
 * `settings` is JSON (flat keys for the organisation, override categories for a workspace).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('security_settings')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('scope_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('security_settings_pk', ['scope', 'scope_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('security_settings').execute();
}
