import type { Migration, MigrationProvider } from 'kysely';
import * as foundation from './0001-foundation.js';
import * as credentials from './0002-credentials.js';
import * as requestLogs from './0003-request-logs.js';
import * as limits from './0004-limits.js';
import * as notifications from './0005-notifications.js';
import * as identity from './0006-identity.js';
import * as keyRotation from './0007-key-rotation.js';
import * as settings from './0008-settings.js';
import * as configs from './0009-configs.js';
import * as routing from './0010-routing.js';
import * as cache from './0011-cache.js';
import * as observability from './0012-observability.js';
import * as analyticsRollups from './0013-analytics-rollups.js';
import * as requestLogModels from './0014-request-log-models.js';
import * as modelCatalogue from './0015-model-catalogue.js';
import * as guardrails from './0016-guardrails.js';
import * as guardrailVerdicts from './0017-guardrail-verdicts.js';
import * as prompts from './0018-prompts.js';
import * as jwt from './0019-jwt.js';
import * as sessions from './0020-sessions.js';
import * as scim from './0021-scim.js';
import * as mcp from './0022-mcp.js';
import * as secretReferences from './0023-secret-references.js';
import * as deployments from './0024-deployments.js';
import * as integrationWorkspaces from './0025-integration-workspaces.js';
import * as exportChunks from './0026-export-chunks.js';
import * as agents from './0027-agents.js';
import * as mcpUserOAuth from './0028-mcp-user-oauth.js';
import * as referenceAdminFields from './0029-reference-admin-fields.js';
import * as credentialLimits from './0030-credential-limits.js';
import * as auditCountry from './0031-audit-country.js';
import * as logListIndexes from './0032-log-list-indexes.js';
import * as cacheSavings from './0033-cache-savings.js';
import * as metadataRollups from './0034-metadata-rollups.js';
import * as narrowRollups from './0035-narrow-rollups.js';

/** Migrations in order; names sort, and a name never changes once released. */
const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0002-credentials': credentials,
  '0003-request-logs': requestLogs,
  '0004-limits': limits,
  '0005-notifications': notifications,
  '0006-identity': identity,
  '0007-key-rotation': keyRotation,
  '0008-settings': settings,
  '0009-configs': configs,
  '0010-routing': routing,
  '0011-cache': cache,
  '0012-observability': observability,
  '0013-analytics-rollups': analyticsRollups,
  '0014-request-log-models': requestLogModels,
  '0015-model-catalogue': modelCatalogue,
  '0016-guardrails': guardrails,
  '0017-guardrail-verdicts': guardrailVerdicts,
  '0018-prompts': prompts,
  '0019-jwt': jwt,
  '0020-sessions': sessions,
  '0021-scim': scim,
  '0022-mcp': mcp,
  '0023-secret-references': secretReferences,
  '0024-deployments': deployments,
  '0025-integration-workspaces': integrationWorkspaces,
  '0026-export-chunks': exportChunks,
  '0027-agents': agents,
  '0028-mcp-user-oauth': mcpUserOAuth,
  '0029-reference-admin-fields': referenceAdminFields,
  '0030-credential-limits': credentialLimits,
  '0031-audit-country': auditCountry,
  '0032-log-list-indexes': logListIndexes,
  '0033-cache-savings': cacheSavings,
  '0034-metadata-rollups': metadataRollups,
  '0035-narrow-rollups': narrowRollups,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
