import type { Db } from '../database.js';
import { createApiKeyRepository } from './api-keys.js';
import { createAuditLogRepository } from './audit-logs.js';
import { createRateLimitPolicyRepository } from './rate-limit-policies.js';
import { createWorkspaceRepository } from './workspaces.js';

export function createRepositories(db: Db) {
  return {
    apiKeys: createApiKeyRepository(db),
    auditLogs: createAuditLogRepository(db),
    rateLimitPolicies: createRateLimitPolicyRepository(db),
    workspaces: createWorkspaceRepository(db),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
