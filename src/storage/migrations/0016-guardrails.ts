import { sql, type Kysely } from 'kysely';

/**
 * Guardrails and their versions, and workspace defaults (the guardrails every request of a
 * workspace runs). A guardrail belongs to its organisation (`workspace_id` null) or to one
 * workspace. Every change is a new version row; `latest_version_id` is the one in use. A slug is
 * unique among the active guardrails of an organisation, so an archived guardrail frees its slug.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('guardrails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('latest_version_id', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('guardrails_active_slug')
    .on('guardrails')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();
  await db.schema
    .createIndex('guardrails_workspace')
    .on('guardrails')
    .columns(['organisation_id', 'workspace_id'])
    .execute();

  await db.schema
    .createTable('guardrail_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('guardrail_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('checks', 'text', (c) => c.notNull())
    .addColumn('actions', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by_key_id', 'text')
    .addUniqueConstraint('guardrail_versions_number', ['guardrail_id', 'version'])
    .execute();

  await db.schema.alterTable('workspaces').addColumn('defaults', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workspaces').dropColumn('defaults').execute();
  await db.schema.dropTable('guardrail_versions').execute();
  await db.schema.dropTable('guardrails').execute();
}
