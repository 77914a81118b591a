import { createApiKeyCreation } from './key-creation.js';
import { createApiKeyReads } from './key-reads.js';
import { createApiKeyRotation } from './key-rotation.js';
import { createApiKeyUpdates } from './key-updates.js';
import type { ApiKeyAdminDeps } from './service-deps.js';

/**
 * Who may create, see and revoke which keys, after the spec's role table: owners and admins
 * make admin keys and workspace keys anywhere; workspace managers make workspace keys in their
 * own workspace; members make none. No key can grant a scope it does not hold itself.
 * The parts: key-creation, key-reads, key-updates (changes, revocation), key-rotation.
 */
export function createApiKeyAdminService(deps: ApiKeyAdminDeps) {
  return {
    ...createApiKeyCreation(deps),
    ...createApiKeyReads(deps),
    ...createApiKeyUpdates(deps),
    ...createApiKeyRotation(deps),
  };
}

export type ApiKeyAdminService = ReturnType<typeof createApiKeyAdminService>;
