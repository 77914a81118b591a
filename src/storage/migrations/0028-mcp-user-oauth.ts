import type { Kysely } from 'kysely';

/**
 * Per-user OAuth for MCP servers (docs/mcp.md, "Per-user authorization"). A user's connection
 * to an MCP server now also holds that user's upstream tokens, sealed with the master key
 * (`access_token`, `refresh_token`; null for a connection that is only a record of use), when
 * the access token expires and the scope granted. `mcp_oauth_clients` keeps svcgw's client
 * registration at an integration's authorization server (dynamic client registration, RFC
 * 7591): the whole registration answer sealed, since it holds the client secret.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mcp_connections').addColumn('access_token', 'text').execute();
  await db.schema.alterTable('mcp_connections').addColumn('refresh_token', 'text').execute();
  await db.schema.alterTable('mcp_connections').addColumn('token_expires_at', 'integer').execute();
  await db.schema.alterTable('mcp_connections').addColumn('token_scope', 'text').execute();

  await db.schema
    .createTable('mcp_oauth_clients')
    .addColumn('integration_id', 'text', (c) => c.primaryKey())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('client_information', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mcp_oauth_clients').execute();
  for (const column of ['token_scope', 'token_expires_at', 'refresh_token', 'access_token'])
    await db.schema.alterTable('mcp_connections').dropColumn(column).execute();
}
