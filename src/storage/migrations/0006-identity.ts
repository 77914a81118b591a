import type { Kysely } from 'kysely';

/**
 * Identity and access: user invites (the token stored only as a hash), the workspaces each
 * invite grants, and when a workspace membership last changed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('invited_by_user_id', 'text')
    .addColumn('invited_by_key_id', 'text')
    .addColumn('accepted_at', 'text')
    .addColumn('accepted_user_id', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('invites_org_status')
    .on('invites')
    .columns(['organisation_id', 'status', 'expires_at'])
    .execute();
  await db.schema.createIndex('invites_org_email').on('invites').columns(['organisation_id', 'email']).execute();

  await db.schema
    .createTable('invite_workspaces')
    .addColumn('invite_id', 'text', (c) => c.notNull().references('invites.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('invite_workspaces_pk', ['invite_id', 'workspace_id'])
    .execute();
  await db.schema
    .createIndex('invite_workspaces_workspace')
    .on('invite_workspaces')
    .columns(['workspace_id', 'invite_id'])
    .execute();

  await db.schema.alterTable('workspace_members').addColumn('last_updated_at', 'text').execute();
  await db.schema.createIndex('workspace_members_user').on('workspace_members').columns(['user_id']).execute();
  await db.schema.createIndex('api_keys_user').on('api_keys').columns(['user_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('api_keys_user').execute();
  await db.schema.dropIndex('workspace_members_user').execute();
  await db.schema.alterTable('workspace_members').dropColumn('last_updated_at').execute();
  await db.schema.dropTable('invite_workspaces').execute();
  await db.schema.dropTable('invites').execute();
}
