import type { IdentityTables } from './schema/identity.js';
import type { ScimTables } from './schema/scim.js';
import type { LimitsTables } from './schema/limits.js';
import type { AuditAndNotificationsTables } from './schema/audit-and-notifications.js';
import type { CredentialsTables } from './schema/credentials.js';
import type { RequestLogsTables } from './schema/request-logs.js';
import type { ConfigsAndGuardrailsTables } from './schema/configs-and-guardrails.js';
import type { PromptsTables } from './schema/prompts.js';
import type { DeploymentsTables } from './schema/deployments.js';
import type { McpTables } from './schema/mcp.js';
import type { AgentsTables } from './schema/agents.js';

/**
 * Table types. Timestamps are ISO-8601 UTC strings and structured fields are JSON text, so
 * that the same migrations and queries run on SQLite and PostgreSQL.
 */
export type {
  OrganisationsTable,
  WorkspaceStatus,
  WorkspacesTable,
  OrgRole,
  UsersTable,
  WorkspaceRole,
  WorkspaceMembersTable,
  ApiKeyType,
  ApiKeyStatus,
  ApiKeysTable,
  JwtSettingsTable,
  InviteStatus,
  InvitesTable,
  InviteWorkspacesTable,
  SecuritySettingsScope,
  SecuritySettingsTable,
  SsoProtocol,
  SsoSettingsTable,
  SsoLoginsTable,
  SessionsTable,
  IdentityTables,
} from './schema/identity.js';
export type {
  ScimTokensTable,
  ScimGroupsTable,
  ScimGroupMembersTable,
  ScimWorkspaceMappingsTable,
  ScimTables,
} from './schema/scim.js';
export type {
  RateLimitPoliciesTable,
  UsageLimitPoliciesTable,
  UsageCountersTable,
  LimitCountersTable,
  LimitsTables,
} from './schema/limits.js';
export type {
  AuditLogsTable,
  NotificationStatus,
  NotificationsTable,
  AuditAndNotificationsTables,
} from './schema/audit-and-notifications.js';
export type {
  CredentialStatus,
  IntegrationsTable,
  IntegrationWorkspacesTable,
  IntegrationModelsTable,
  ModelAliasesTable,
  ProvidersTable,
  VirtualKeysTable,
  SecretManagerType,
  SecretReferencesTable,
  CredentialsTables,
} from './schema/credentials.js';
export type { RequestLogsTable, RequestLogsTables } from './schema/request-logs.js';
export type {
  ConfigsTable,
  ConfigVersionsTable,
  GuardrailsTable,
  GuardrailVersionsTable,
  ConfigsAndGuardrailsTables,
} from './schema/configs-and-guardrails.js';
export type {
  PromptCollectionsTable,
  PromptsTable,
  PromptVersionsTable,
  PromptLabelsTable,
  PromptsTables,
} from './schema/prompts.js';
export type {
  DeploymentType,
  DeploymentsTable,
  DeploymentInstanceStatus,
  DeploymentInstancesTable,
  DeploymentsTables,
} from './schema/deployments.js';
export type {
  McpTransport,
  McpAuthType,
  McpSyncStatus,
  McpCapabilityType,
  McpIntegrationsTable,
  McpIntegrationWorkspacesTable,
  McpCapabilitiesTable,
  McpServersTable,
  McpServerCapabilitiesTable,
  McpServerUserAccessTable,
  McpConnectionsTable,
  McpOAuthClientsTable,
  McpTables,
} from './schema/mcp.js';
export type {
  AgentIntegrationsTable,
  AgentIntegrationWorkspacesTable,
  AgentSkillsTable,
  AgentServersTable,
  AgentServerSkillsTable,
  AgentServerUsersTable,
  AgentsTables,
} from './schema/agents.js';

/**
 * Every table, joined from the per-feature files in ./schema/. Features that keep their tables
 * apart (analytics, observability, the cache) add theirs by module augmentation of this interface.
 */
export interface Database
  extends
    IdentityTables,
    ScimTables,
    LimitsTables,
    AuditAndNotificationsTables,
    CredentialsTables,
    RequestLogsTables,
    ConfigsAndGuardrailsTables,
    PromptsTables,
    DeploymentsTables,
    McpTables,
    AgentsTables {}
