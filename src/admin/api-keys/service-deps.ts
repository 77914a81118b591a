import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import type { Clock } from '../../lib/clock.js';
import type { RotationWriter } from '../../secrets/rotation-writer.js';
import type { ApiKeyRepository } from '../../storage/repositories/api-keys.js';
import type { ConfigRepository } from '../../storage/repositories/configs.js';
import type { SecretReferenceRepository } from '../../storage/repositories/secret-references.js';
import type { UsageCounterRepository } from '../../storage/repositories/usage-counters.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import type { CheckUserKeyPolicy } from '../settings/security-settings.js';

/** Everything the API key admin service reads and writes; each part takes the few it needs. */
export interface ApiKeyAdminDeps {
  checkUserKeyPolicy: CheckUserKeyPolicy;
  keys: ApiKeyRepository;
  configs: ConfigRepository;
  workspaces: WorkspaceRepository;
  usage: UsageCounterRepository;
  verifier: ApiKeyVerifier;
  clock: Clock;
  secretReferences: SecretReferenceRepository;
  rotationWriter: RotationWriter;
}

/** The clock's time as stored in timestamp columns. */
export const isoNow = (clock: Clock): string => new Date(clock.now()).toISOString();
