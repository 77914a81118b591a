import type { Kysely } from 'kysely';

const TABLES = ['providers', 'virtual_keys'] as const;

/**
 * Limits of a stored credential (a provider or a virtual key), as the reference has them:
 * `usage_limits` and `rate_limits` (JSON, like those of API keys and workspaces) and
 * `expires_at`, after which the gateway refuses the credential.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await db.schema.alterTable(table).addColumn('usage_limits', 'text').execute();
    await db.schema.alterTable(table).addColumn('rate_limits', 'text').execute();
    await db.schema.alterTable(table).addColumn('expires_at', 'text').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await db.schema.alterTable(table).dropColumn('expires_at').execute();
    await db.schema.alterTable(table).dropColumn('rate_limits').execute();
    await db.schema.alterTable(table).dropColumn('usage_limits').execute();
  }
}
