import type { Kysely, Migration, MigrationProvider } from 'kysely';

/** The module of one migration: `up`, and `down` where the migration can be undone. */
interface MigrationModule {
  up(db: Kysely<unknown>): Promise<void>;
  down?(db: Kysely<unknown>): Promise<void>;
}

/**
 * Migrations in order; names sort, and a name never changes once released. Each is imported when
 * it runs: a server whose database is up to date never loads them (issue #19), since the migrator
 * needs only the names to find nothing left to do.
 */
const modules: Record<string, () => Promise<MigrationModule>> = {
  '0001-foundation': () => import('./0001-foundation.js'),
  '0002-credentials': () => import('./0002-credentials.js'),
  '0003-request-logs': () => import('./0003-request-logs.js'),
  '0004-limits': () => import('./0004-limits.js'),
  '0005-notifications': () => import('./0005-notifications.js'),
  '0006-identity': () => import('./0006-identity.js'),
  '0007-key-rotation': () => import('./0007-key-rotation.js'),
  '0008-settings': () => import('./0008-settings.js'),
  '0009-configs': () => import('./0009-configs.js'),
  '0010-routing': () => import('./0010-routing.js'),
  '0011-cache': () => import('./0011-cache.js'),
  '0012-observability': () => import('./0012-observability.js'),
  '0013-analytics-rollups': () => import('./0013-analytics-rollups.js'),
  '0014-request-log-models': () => import('./0014-request-log-models.js'),
  '0015-model-catalogue': () => import('./0015-model-catalogue.js'),
  '0016-guardrails': () => import('./0016-guardrails.js'),
  '0017-guardrail-verdicts': () => import('./0017-guardrail-verdicts.js'),
  '0018-prompts': () => import('./0018-prompts.js'),
  '0019-jwt': () => import('./0019-jwt.js'),
  '0020-sessions': () => import('./0020-sessions.js'),
  '0021-scim': () => import('./0021-scim.js'),
  '0022-mcp': () => import('./0022-mcp.js'),
  '0023-secret-references': () => import('./0023-secret-references.js'),
  '0024-deployments': () => import('./0024-deployments.js'),
  '0025-integration-workspaces': () => import('./0025-integration-workspaces.js'),
  '0026-export-chunks': () => import('./0026-export-chunks.js'),
  '0027-agents': () => import('./0027-agents.js'),
  '0028-mcp-user-oauth': () => import('./0028-mcp-user-oauth.js'),
  '0029-reference-admin-fields': () => import('./0029-reference-admin-fields.js'),
  '0030-credential-limits': () => import('./0030-credential-limits.js'),
  '0031-audit-country': () => import('./0031-audit-country.js'),
  '0032-log-list-indexes': () => import('./0032-log-list-indexes.js'),
  '0033-cache-savings': () => import('./0033-cache-savings.js'),
  '0034-metadata-rollups': () => import('./0034-metadata-rollups.js'),
  '0035-narrow-rollups': () => import('./0035-narrow-rollups.js'),
};

function loadedWhenRun(name: string, load: () => Promise<MigrationModule>): Migration {
  return {
    up: async (db) => (await load()).up(db),
    down: async (db) => {
      const migration = await load();
      if (!migration.down) throw new Error(`migration ${name} cannot be undone`);
      await migration.down(db);
    },
  };
}

const migrations: Record<string, Migration> = Object.fromEntries(
  Object.entries(modules).map(([name, load]) => [name, loadedWhenRun(name, load)]),
);

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
