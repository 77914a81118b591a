import type { Kysely } from 'kysely';

/** Organisations, workspaces, users, API keys, rate-limit policies and the audit log. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organisations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('workspaces_org_slug', ['organisation_id', 'slug'])
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('users_org_email', ['organisation_id', 'email'])
    .execute();

  await db.schema
    .createTable('workspace_members')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('workspace_members_pk', ['workspace_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('workspace_id', 'text', (c) => c.references('workspaces.id'))
    .addColumn('user_id', 'text', (c) => c.references('users.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_hint', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('creation_mode', 'text', (c) => c.notNull())
    .addColumn('created_by_key_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('api_keys_org_workspace')
    .on('api_keys')
    .columns(['organisation_id', 'workspace_id'])
    .execute();

  await db.schema
    .createTable('rate_limit_policies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text')
    .addColumn('conditions', 'text', (c) => c.notNull())
    .addColumn('group_by', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('unit', 'text', (c) => c.notNull())
    .addColumn('value', 'real', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('rate_limit_policies_scope')
    .on('rate_limit_policies')
    .columns(['organisation_id', 'workspace_id', 'status'])
    .execute();

  await db.schema
    .createTable('audit_logs')
    .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_key_id', 'text')
    .addColumn('actor_user_id', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text')
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('query', 'text')
    .addColumn('request_body', 'text')
    .addColumn('response_status_code', 'integer', (c) => c.notNull())
    .addColumn('client_ip', 'text')
    .addColumn('request_id', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('audit_logs_org_time')
    .on('audit_logs')
    .columns(['organisation_id', 'timestamp'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'audit_logs',
    'rate_limit_policies',
    'api_keys',
    'workspace_members',
    'users',
    'workspaces',
    'organisations',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
