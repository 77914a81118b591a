import { sql, type Kysely } from 'kysely';

/**
 * The agent gateway (docs/agents.md). An agent integration is a remote A2A agent (where its card
 * is, how to authenticate to it), owned by the organisation (`workspace_id` null) or by one
 * workspace; `encrypted_auth` is a secret-box value. What the last card read said is kept beside
 * it (sync columns), with the card's skills in `agent_skills`. An organisation integration is
 * usable in the workspaces `agent_integration_workspaces` enables, or in all of them with
 * `global_workspace_access`. An agent server is an integration's instance in one workspace: the
 * thing the gateway serves at `/v1/agents/{slug}`, with its own skill switches and user access.
 * Slugs are unique among the active rows of an organisation, so archiving frees a slug.
 * Request logs of agent calls name the server, the JSON-RPC method and the sizes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_integrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('rpc_url', 'text')
    .addColumn('auth_type', 'text', (c) => c.notNull())
    .addColumn('encrypted_auth', 'text')
    .addColumn('global_workspace_access', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .addColumn('sync_status', 'text', (c) => c.notNull())
    .addColumn('sync_error', 'text')
    .addColumn('last_synced_at', 'text')
    .addColumn('card', 'text')
    .addColumn('card_rpc_url', 'text')
    .addColumn('agent_name', 'text')
    .addColumn('agent_version', 'text')
    .addColumn('protocol_version', 'text')
    .execute();
  await db.schema
    .createIndex('agent_integrations_active_slug')
    .on('agent_integrations')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();

  await db.schema
    .createTable('agent_integration_workspaces')
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_integration_workspaces_pkey', ['integration_id', 'workspace_id'])
    .execute();

  await db.schema
    .createTable('agent_skills')
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('skill_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_skills_pkey', ['integration_id', 'skill_id'])
    .execute();

  await db.schema
    .createTable('agent_servers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('default_user_access', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('agent_servers_active_slug')
    .on('agent_servers')
    .columns(['organisation_id', 'slug'])
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();
  await db.schema.createIndex('agent_servers_integration').on('agent_servers').column('integration_id').execute();

  await db.schema
    .createTable('agent_server_skills')
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('skill_id', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_server_skills_pkey', ['server_id', 'skill_id'])
    .execute();

  await db.schema
    .createTable('agent_server_users')
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_server_users_pkey', ['server_id', 'user_id'])
    .execute();

  await db.schema.alterTable('request_logs').addColumn('agent_server_id', 'text').execute();
  await db.schema.alterTable('request_logs').addColumn('rpc_method', 'text').execute();
  // request_bytes and response_bytes came with MCP tool calls (0022); agent calls fill them too.
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['agent_server_id', 'rpc_method'])
    await db.schema.alterTable('request_logs').dropColumn(column).execute();
  for (const table of [
    'agent_server_users',
    'agent_server_skills',
    'agent_servers',
    'agent_skills',
    'agent_integration_workspaces',
    'agent_integrations',
  ])
    await db.schema.dropTable(table).execute();
}
