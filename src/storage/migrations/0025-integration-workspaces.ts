import type { Kysely } from 'kysely';

/**
 * Which workspaces may use an integration (`/v1/integrations/{slug}/workspaces`):
 * `integrations.all_workspaces` is the rule for every workspace (1, as before this migration:
 * all of them), and a row of `integration_workspaces` is a workspace's own setting, which wins.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('integrations')
    .addColumn('all_workspaces', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .createTable('integration_workspaces')
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('integration_workspaces_pk', ['integration_id', 'workspace_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('integration_workspaces').execute();
  await db.schema.alterTable('integrations').dropColumn('all_workspaces').execute();
}
