import { sql, type Kysely } from 'kysely';

/**
 * Secret references: where a provider key (or a provider setting) lives in an external secret
 * manager, and how to sign in to it. `auth_config` is JSON whose secret fields are sealed with
 * the master key, like provider configurations. Integrations and virtual keys gain
 * `secret_mappings` (JSON: which of their fields is read from which reference). A slug is unique
 * among the active references of an organisation, so an archived one frees its slug.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('secret_references')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('manager_type', 'text', (c) => c.notNull())
    .addColumn('auth_config', 'text', (c) => c.notNull())
    .addColumn('secret_path', 'text', (c) => c.notNull())
    .addColumn('secret_key', 'text')
    .addColumn('allow_all_workspaces', 'integer', (c) => c.notNull())
    .addColumn('allowed_workspaces', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('secret_references_org_slug_active')
    .on('secret_references')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();
  await db.schema
    .createIndex('secret_references_org_status')
    .on('secret_references')
    .columns(['organisation_id', 'status'])
    .execute();
  for (const table of ['integrations', 'virtual_keys'])
    await db.schema
      .alterTable(table)
      .addColumn('secret_mappings', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['virtual_keys', 'integrations'])
    await db.schema.alterTable(table).dropColumn('secret_mappings').execute();
  await db.schema.dropTable('secret_references').execute();
}
