import type { Kysely } from 'kysely';

/**
 * Fields the reference's organisation API documents: an API key's `alert_emails` (JSON array of
 * addresses that its alerts also go to) and an invite's `workspace_api_key_details` (JSON
 * `{scopes, name?}` given to the invitee's first workspace key when they accept).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('alert_emails', 'text').execute();
  await db.schema.alterTable('invites').addColumn('workspace_api_key_details', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('invites').dropColumn('workspace_api_key_details').execute();
  await db.schema.alterTable('api_keys').dropColumn('alert_emails').execute();
}
