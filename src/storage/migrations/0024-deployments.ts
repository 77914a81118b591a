import { sql, type Kysely } from 'kysely';

/**
 * Deployments (named groups of gateway instances, docs/deployments.md) and the instances that
 * registered in them. A deployment's slug is unique among the active deployments of an
 * organisation, so a deleted (archived) one frees its slug. An instance row is written when
 * `svcgw serve --deployment <slug>` starts (or is refused), its heartbeat moves
 * `last_heartbeat_at`, and rows long silent are pruned.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('deployments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('config_id', 'text')
    .addColumn('rate_limits', 'text')
    .addColumn('usage_limits', 'text')
    .addColumn('allowed_workspaces', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('deployments_active_slug')
    .on('deployments')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();

  await db.schema
    .createTable('deployment_instances')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('deployment_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('min_gateway_version', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('heartbeat_interval_ms', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('last_heartbeat_at', 'text', (c) => c.notNull())
    .addColumn('stopped_at', 'text')
    .addColumn('refusal_reason', 'text')
    .execute();
  await db.schema
    .createIndex('deployment_instances_deployment')
    .on('deployment_instances')
    .columns(['deployment_id', 'started_at'])
    .execute();
  await db.schema
    .createIndex('deployment_instances_heartbeat')
    .on('deployment_instances')
    .columns(['last_heartbeat_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('deployment_instances').execute();
  await db.schema.dropTable('deployments').execute();
}
