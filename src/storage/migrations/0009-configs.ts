import { sql, type Kysely } from 'kysely';

/**
 * Gateway configs and their versions. Every change of a config's body is a new version row;
 * `latest_version_id` points at the one in use. A slug is unique among the active configs of an
 * organisation, so an archived config frees its slug.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('configs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('latest_version_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('configs_active_slug')
    .on('configs')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();
  await db.schema.createIndex('configs_workspace').on('configs').columns(['organisation_id', 'workspace_id']).execute();

  await db.schema
    .createTable('config_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('config_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by_key_id', 'text')
    .addUniqueConstraint('config_versions_number', ['config_id', 'version'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('config_versions').execute();
  await db.schema.dropTable('configs').execute();
}
