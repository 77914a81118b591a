import type { Kysely } from 'kysely';

/**
 * Usage-limits policies, the rate and usage limits of API keys and workspaces, the settled
 * usage of every budget bucket, and the persisted rate-limit counters of a single instance.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('rate_limits', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('usage_limits', 'text').execute();
  await db.schema.alterTable('workspaces').addColumn('rate_limits', 'text').execute();
  await db.schema.alterTable('workspaces').addColumn('usage_limits', 'text').execute();

  await db.schema
    .createTable('usage_limit_policies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text')
    .addColumn('conditions', 'text', (c) => c.notNull())
    .addColumn('group_by', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('credit_limit', 'real', (c) => c.notNull())
    .addColumn('alert_threshold', 'real')
    .addColumn('periodic_reset', 'text')
    .addColumn('periodic_reset_days', 'integer')
    .addColumn('next_usage_reset_at', 'text')
    .addColumn('last_reset_at', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('usage_limit_policies_scope')
    .on('usage_limit_policies')
    .columns(['organisation_id', 'workspace_id', 'status'])
    .execute();

  // Settled usage per budget bucket and period: what `current_usage` shows.
  await db.schema
    .createTable('usage_counters')
    .addColumn('scope_type', 'text', (c) => c.notNull())
    .addColumn('scope_id', 'text', (c) => c.notNull())
    .addColumn('value_key', 'text', (c) => c.notNull())
    .addColumn('period_start', 'text', (c) => c.notNull())
    .addColumn('current_usage', 'real', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_counters_pk', ['scope_type', 'scope_id', 'value_key', 'period_start'])
    .execute();

  // Rate-limit and budget counters of the in-process store, so windows survive a restart.
  await db.schema
    .createTable('limit_counters')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('count', 'real', (c) => c.notNull())
    .addColumn('expires_at', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('limit_counters').execute();
  await db.schema.dropTable('usage_counters').execute();
  await db.schema.dropTable('usage_limit_policies').execute();
  for (const table of ['api_keys', 'workspaces']) {
    await db.schema.alterTable(table).dropColumn('rate_limits').execute();
    await db.schema.alterTable(table).dropColumn('usage_limits').execute();
  }
}
