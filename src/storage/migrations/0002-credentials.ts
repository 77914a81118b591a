import { sql, type Kysely } from 'kysely';

/**
 * Provider credentials: organisation integrations, the workspace providers that use them, and
 * legacy virtual keys. Slugs are unique among active rows only (partial unique indexes, which
 * SQLite and PostgreSQL both have), so that deleting (archiving) frees a slug for reuse.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('integrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('ai_provider_id', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('encrypted_key', 'text')
    .addColumn('key_hint', 'text')
    .addColumn('configurations', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addColumn('last_reset_at', 'text')
    .execute();
  await db.schema
    .createIndex('integrations_org_slug_active')
    .on('integrations')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();
  await db.schema
    .createIndex('integrations_org_status')
    .on('integrations')
    .columns(['organisation_id', 'status'])
    .execute();

  await db.schema
    .createTable('providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('integration_id', 'text', (c) => c.notNull().references('integrations.id'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addColumn('last_reset_at', 'text')
    .execute();
  await db.schema
    .createIndex('providers_workspace_slug_active')
    .on('providers')
    .columns(['workspace_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();
  await db.schema
    .createIndex('providers_org_workspace')
    .on('providers')
    .columns(['organisation_id', 'workspace_id', 'status'])
    .execute();
  await db.schema.createIndex('providers_integration').on('providers').column('integration_id').execute();

  await db.schema
    .createTable('virtual_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('encrypted_key', 'text')
    .addColumn('key_hint', 'text')
    .addColumn('note', 'text')
    .addColumn('configurations', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addColumn('last_reset_at', 'text')
    .execute();
  await db.schema
    .createIndex('virtual_keys_org_slug_active')
    .on('virtual_keys')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();
  await db.schema
    .createIndex('virtual_keys_org_workspace')
    .on('virtual_keys')
    .columns(['organisation_id', 'workspace_id', 'status'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['virtual_keys', 'providers', 'integrations']) {
    await db.schema.dropTable(table).execute();
  }
}
