import { readFileSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import { createSecretCache, type SecretCache } from './secret-cache.js';
import { createSecretManagers, type SecretManagers } from './secret-managers.js';

export { SecretManagerError, type SecretTarget } from './types.js';
export type { SecretCache } from './secret-cache.js';
export type { SecretManagers } from './secret-managers.js';

/** The secret managers of a server (the vendors' clients) and the cache of what was read from them. */
export interface Secrets {
  managers: SecretManagers;
  cache: SecretCache;
}

/** Builds them from the settings; an unreadable `secret_manager_ca_file` stops start-up with its path. */
export function createSecrets(deps: { config: Config; clock: Clock }): Secrets {
  let extraCa: string | null = null;
  if (deps.config.secret_manager_ca_file) {
    try {
      extraCa = readFileSync(deps.config.secret_manager_ca_file, 'utf8');
    } catch (error) {
      throw new Error(
        `secret_manager_ca_file ${deps.config.secret_manager_ca_file} cannot be read: ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (!extraCa.includes('-----BEGIN CERTIFICATE-----'))
      throw new Error(`secret_manager_ca_file ${deps.config.secret_manager_ca_file} holds no PEM certificate.`);
  }
  const managers = createSecretManagers({
    extraCa,
    timeoutMs: deps.config.secret_manager_timeout_ms,
    ambientCredentials: deps.config.secret_manager_ambient_credentials,
    azureChallengeVerification: deps.config.secret_manager_azure_challenge_verification,
    kubernetesTokenPath: deps.config.vault_kubernetes_token_path,
    now: deps.clock.now,
  });
  return {
    managers,
    cache: createSecretCache({ managers, clock: deps.clock, ttlMs: deps.config.secret_cache_ttl_ms }),
  };
}
