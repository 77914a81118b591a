import type { Db } from '../database.js';
import { createApiKeyRepository } from './api-keys.js';
import { createAuditLogRepository } from './audit-logs.js';
import { createConfigRepository } from './configs.js';
import { createGuardrailRepository } from './guardrails.js';
import { createIntegrationRepository } from './integrations.js';
import { createProviderRepository } from './providers.js';
import { createRateLimitPolicyRepository } from './rate-limit-policies.js';
import { createRequestLogRepository } from './request-logs.js';
import { createUsageLimitPolicyRepository } from './usage-limit-policies.js';
import { createVirtualKeyRepository } from './virtual-keys.js';
import { createUsageCounterRepository } from './usage-counters.js';
import { createWorkspaceRepository } from './workspaces.js';
import { createInviteRepository } from './invites.js';
import { createMemberRepository } from './members.js';
import { createUserRepository } from './users.js';
import { createIntegrationModelRepository } from './integration-models.js';
import { createIntegrationWorkspaceRepository } from './integration-workspaces.js';
import { createModelAliasRepository } from './model-aliases.js';
import { createPromptRepository } from './prompts.js';
import { createJwtSettingsRepository } from './jwt-settings.js';
import { createScimGroupRepository } from './scim-groups.js';
import { createScimMappingRepository } from './scim-mappings.js';
import { createScimTokenRepository } from './scim-tokens.js';
import { createScimUserRepository } from './scim-users.js';
import { createDeploymentRepository } from './deployments.js';
import { createSessionRepository } from './sessions.js';
import { createSsoRepository } from './sso.js';
import { createMcpIntegrationRepository } from './mcp-integrations.js';
import { createMcpServerRepository } from './mcp-servers.js';
import { createSecretReferenceRepository } from './secret-references.js';

export function createRepositories(db: Db) {
  return {
    apiKeys: createApiKeyRepository(db),
    auditLogs: createAuditLogRepository(db),
    configs: createConfigRepository(db),
    guardrails: createGuardrailRepository(db),
    integrations: createIntegrationRepository(db),
    providers: createProviderRepository(db),
    rateLimitPolicies: createRateLimitPolicyRepository(db),
    requestLogs: createRequestLogRepository(db),
    usageLimitPolicies: createUsageLimitPolicyRepository(db),
    virtualKeys: createVirtualKeyRepository(db),
    usageCounters: createUsageCounterRepository(db),
    workspaces: createWorkspaceRepository(db),
    users: createUserRepository(db),
    invites: createInviteRepository(db),
    members: createMemberRepository(db),
    integrationModels: createIntegrationModelRepository(db),
    integrationWorkspaces: createIntegrationWorkspaceRepository(db),
    modelAliases: createModelAliasRepository(db),
    prompts: createPromptRepository(db),
    jwtSettings: createJwtSettingsRepository(db),
    scimTokens: createScimTokenRepository(db),
    scimUsers: createScimUserRepository(db),
    scimGroups: createScimGroupRepository(db),
    scimMappings: createScimMappingRepository(db),
    deployments: createDeploymentRepository(db),
    sessions: createSessionRepository(db),
    sso: createSsoRepository(db),
    mcpIntegrations: createMcpIntegrationRepository(db),
    mcpServers: createMcpServerRepository(db),
    secretReferences: createSecretReferenceRepository(db),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
