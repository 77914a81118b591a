import { sql, type Kysely } from 'kysely';

/**
 * Prompts and prompt partials (one table, told apart by `kind`) with their versions, prompt
 * collections and labels, and the prompt version and label on the request log (`prompt_id`
 * is there since 0010). A slug is unique among the active prompts (or partials) of an
 * organisation, so an archived one frees its slug. Versions are never changed, except for
 * their label.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('prompt_collections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('parent_collection_id', 'text')
    .addColumn('is_default', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('prompt_collections_active_slug')
    .on('prompt_collections')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();
  // One default collection per workspace, however many requests race to make it.
  await db.schema
    .createIndex('prompt_collections_default')
    .on('prompt_collections')
    .columns(['workspace_id'])
    .unique()
    .where(sql.ref('is_default'), '=', 1)
    .execute();

  await db.schema
    .createTable('prompts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('default_version_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('prompts_active_slug')
    .on('prompts')
    .columns(['organisation_id', 'kind', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();
  await db.schema.createIndex('prompts_collection').on('prompts').columns(['collection_id']).execute();

  await db.schema
    .createTable('prompt_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('prompt_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('string', 'text', (c) => c.notNull())
    .addColumn('parameters', 'text')
    .addColumn('model', 'text')
    .addColumn('virtual_key', 'text')
    .addColumn('config_id', 'text')
    .addColumn('functions', 'text')
    .addColumn('tools', 'text')
    .addColumn('tool_choice', 'text')
    .addColumn('template_metadata', 'text')
    .addColumn('is_raw_template', 'integer', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('label_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by_key_id', 'text')
    .addUniqueConstraint('prompt_versions_number', ['prompt_id', 'version'])
    .execute();
  await db.schema.createIndex('prompt_versions_label').on('prompt_versions').columns(['label_id']).execute();

  await db.schema
    .createTable('prompt_labels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('color_code', 'text')
    .addColumn('is_universal', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  // The universal labels are made on first use; this keeps concurrent first uses to one row each.
  await db.schema
    .createIndex('prompt_labels_universal')
    .on('prompt_labels')
    .columns(['organisation_id', 'name'])
    .unique()
    .where(sql.ref('is_universal'), '=', 1)
    .execute();

  await db.schema.alterTable('request_logs').addColumn('prompt_version', 'integer').execute();
  await db.schema.alterTable('request_logs').addColumn('prompt_label', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('prompt_label').execute();
  await db.schema.alterTable('request_logs').dropColumn('prompt_version').execute();
  await db.schema.dropTable('prompt_labels').execute();
  await db.schema.dropTable('prompt_versions').execute();
  await db.schema.dropTable('prompts').execute();
  await db.schema.dropTable('prompt_collections').execute();
}
