import type { Kysely } from 'kysely';

/**
 * Single sign-on and sessions: the organisation's identity providers and session settings
 * (one row per organisation; the OIDC client secret sealed by the secret box), logins under
 * way (one row from the redirect to the identity provider until the CLI exchanges its one-time
 * code), and the sessions they end in. Session tokens and login codes are stored as SHA-256
 * hashes only. `sessions.user_id` has no foreign key: removing a user ends their sessions
 * (see repositories/users.ts) and the rows stay for the record.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sso_settings')
    .addColumn('organisation_id', 'text', (c) => c.primaryKey().references('organisations.id'))
    .addColumn('oidc', 'text')
    .addColumn('oidc_client_secret', 'text')
    .addColumn('saml', 'text')
    .addColumn('provisioning', 'text', (c) => c.notNull())
    .addColumn('max_session_ttl', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sso_logins')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('client_state', 'text')
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('workspace', 'text')
    .addColumn('callback_url', 'text', (c) => c.notNull())
    .addColumn('oidc_code_verifier', 'text')
    .addColumn('oidc_nonce', 'text')
    .addColumn('saml_request_id', 'text')
    .addColumn('user_id', 'text')
    .addColumn('subject', 'text')
    .addColumn('code_hash', 'text', (c) => c.unique())
    .addColumn('completed_at', 'text')
    .addColumn('consumed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_logins_expiry').on('sso_logins').columns(['expires_at']).execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('workspace_id', 'text')
    .addColumn('identity_provider', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('client', 'text')
    .addColumn('client_ip', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('end_reason', 'text')
    .execute();
  await db.schema.createIndex('sessions_org_user').on('sessions').columns(['organisation_id', 'user_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropTable('sso_logins').execute();
  await db.schema.dropTable('sso_settings').execute();
}
