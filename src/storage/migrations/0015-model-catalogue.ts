import type { Kysely } from 'kysely';

/**
 * The model catalogue: which models an integration (and so every provider made from it)
 * allows, the models a workspace is limited to, and model aliases (`model: "default-chat"`).
 * An alias belongs to a workspace or to the whole organisation; `scope_id` is the one or the
 * other, so that a name is unique within its owner (SQLite unique indexes treat NULLs as distinct).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('integrations')
    .addColumn('allow_all_models', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable('workspaces').addColumn('allowed_models', 'text').execute();

  await db.schema
    .createTable('integration_models')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('is_custom', 'integer', (c) => c.notNull())
    .addColumn('is_finetune', 'integer', (c) => c.notNull())
    .addColumn('base_model_slug', 'text')
    .addColumn('pricing_config', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('integration_models_slug', ['integration_id', 'slug'])
    .execute();

  await db.schema
    .createTable('model_aliases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('scope_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('target_model', 'text')
    .addColumn('config_id', 'text')
    .addColumn('description', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('model_aliases_name', ['organisation_id', 'scope_id', 'name'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('model_aliases').execute();
  await db.schema.dropTable('integration_models').execute();
  await db.schema.alterTable('workspaces').dropColumn('allowed_models').execute();
  await db.schema.alterTable('integrations').dropColumn('allow_all_models').execute();
}
