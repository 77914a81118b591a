import { sql, type Kysely } from 'kysely';

/**
 * SCIM 2.0 provisioning: the tokens identity providers authenticate with (stored as hashes),
 * the SCIM identity of users (userName, externalId, the attributes svcgw keeps for them) and
 * whether they are deactivated, SCIM groups with their members, and the mappings of groups to
 * workspaces and roles. `workspace_members.granted_by` tells memberships SCIM granted (and may
 * take away) from those made by hand, which SCIM never touches.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('scim_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_hint', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('created_by_user_id', 'text')
    .addColumn('created_by_key_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('scim_tokens_org').on('scim_tokens').columns(['organisation_id', 'status']).execute();

  await db.schema.alterTable('users').addColumn('scim_user_name', 'text').execute();
  await db.schema.alterTable('users').addColumn('external_id', 'text').execute();
  await db.schema.alterTable('users').addColumn('scim_attributes', 'text').execute();
  await db.schema.alterTable('users').addColumn('deactivated_at', 'text').execute();
  await db.schema
    .createIndex('users_scim_user_name')
    .on('users')
    .columns(['organisation_id', 'scim_user_name'])
    .unique()
    .execute();
  await db.schema.createIndex('users_external_id').on('users').columns(['organisation_id', 'external_id']).execute();

  await db.schema.alterTable('workspace_members').addColumn('granted_by', 'text').execute();

  await db.schema
    .createTable('scim_groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('scim_groups_name')
    .on('scim_groups')
    .columns(['organisation_id', 'display_name'])
    .unique()
    .execute();

  await db.schema
    .createTable('scim_group_members')
    .addColumn('group_id', 'text', (c) => c.notNull().references('scim_groups.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('scim_group_members_pk', ['group_id', 'user_id'])
    .execute();
  await db.schema.createIndex('scim_group_members_user').on('scim_group_members').columns(['user_id']).execute();

  await db.schema
    .createTable('scim_workspace_mappings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    // Null while the mapping names a group (by scim_group_name) that the provider has not pushed yet.
    .addColumn('scim_group_id', 'text')
    .addColumn('scim_group_name', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('scim_workspace_mappings_group')
    .on('scim_workspace_mappings')
    .columns(['organisation_id', 'status', 'scim_group_id'])
    .execute();
  await db.schema
    .createIndex('scim_workspace_mappings_pending')
    .on('scim_workspace_mappings')
    .columns(['organisation_id', 'scim_group_name'])
    .where(sql.ref('scim_group_id'), 'is', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('scim_workspace_mappings').execute();
  await db.schema.dropTable('scim_group_members').execute();
  await db.schema.dropTable('scim_groups').execute();
  await db.schema.alterTable('workspace_members').dropColumn('granted_by').execute();
  await db.schema.dropIndex('users_external_id').execute();
  await db.schema.dropIndex('users_scim_user_name').execute();
  await db.schema.alterTable('users').dropColumn('deactivated_at').execute();
  await db.schema.alterTable('users').dropColumn('scim_attributes').execute();
  await db.schema.alterTable('users').dropColumn('external_id').execute();
  await db.schema.alterTable('users').dropColumn('scim_user_name').execute();
  await db.schema.dropTable('scim_tokens').execute();
}
