import { sql, type Kysely } from 'kysely';

/**
 * MCP integrations (an upstream MCP server: URL, transport, auth, with secrets sealed in
 * `configurations`), which workspaces may use them, the capabilities synced from them, MCP
 * servers (a workspace's instance of an integration, reached through the gateway), their
 * capability overrides, user access and connections; and what a tool call's request log
 * record names (server, tool, sizes of the arguments and the result).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mcp_integrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('transport', 'text', (c) => c.notNull())
    .addColumn('auth_type', 'text', (c) => c.notNull())
    .addColumn('configurations', 'text', (c) => c.notNull())
    .addColumn('secret_mappings', 'text', (c) => c.notNull())
    .addColumn('global_workspace_access', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text')
    .addColumn('server_info', 'text')
    .addColumn('protocol_version', 'text')
    .addColumn('capability_flags', 'text')
    .addColumn('instructions', 'text')
    .addColumn('sync_status', 'text', (c) => c.notNull())
    .addColumn('last_synced_at', 'text')
    .addColumn('sync_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('mcp_integrations_active_slug')
    .on('mcp_integrations')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();

  await db.schema
    .createTable('mcp_integration_workspaces')
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mcp_integration_workspaces_pk', ['integration_id', 'workspace_id'])
    .execute();

  await db.schema
    .createTable('mcp_capabilities')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('present', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('mcp_capabilities_name', ['integration_id', 'type', 'name'])
    .execute();

  await db.schema
    .createTable('mcp_servers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text')
    .addColumn('default_user_access', 'text', (c) => c.notNull())
    .addColumn('input_guardrails', 'text')
    .addColumn('output_guardrails', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('mcp_servers_active_slug')
    .on('mcp_servers')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();
  await db.schema.createIndex('mcp_servers_integration').on('mcp_servers').columns(['integration_id']).execute();

  await db.schema
    .createTable('mcp_server_capabilities')
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mcp_server_capabilities_pk', ['server_id', 'type', 'name'])
    .execute();

  await db.schema
    .createTable('mcp_server_user_access')
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mcp_server_user_access_pk', ['server_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('mcp_connections')
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mcp_connections_pk', ['server_id', 'user_id'])
    .execute();

  await db.schema.alterTable('request_logs').addColumn('mcp_server_id', 'text').execute();
  await db.schema.alterTable('request_logs').addColumn('mcp_tool', 'text').execute();
  await db.schema.alterTable('request_logs').addColumn('request_bytes', 'integer').execute();
  await db.schema.alterTable('request_logs').addColumn('response_bytes', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['response_bytes', 'request_bytes', 'mcp_tool', 'mcp_server_id'])
    await db.schema.alterTable('request_logs').dropColumn(column).execute();
  for (const table of [
    'mcp_connections',
    'mcp_server_user_access',
    'mcp_server_capabilities',
    'mcp_servers',
    'mcp_capabilities',
    'mcp_integration_workspaces',
    'mcp_integrations',
  ])
    await db.schema.dropTable(table).execute();
}
