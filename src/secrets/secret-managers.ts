import { authMethodOf, usesAmbientIdentity } from './auth-config.js';
import { createAwsSecretsManager } from './aws-secrets-manager.js';
import { createAzureKeyVault } from './azure-key-vault.js';
import { createHashicorpVault } from './hashicorp-vault.js';
import { withSecret } from './secret-value.js';
import {
  SecretManagerError,
  type SecretBackend,
  type SecretNetwork,
  type SecretTarget,
  type SecretValue,
} from './types.js';

/** The three backends behind one door, with the server's rules applied before any call. */
export interface SecretManagers {
  read(target: SecretTarget): Promise<SecretValue>;
  /** Sets `key` of the secret (the whole secret when null) to `text`, keeping its other keys. */
  write(target: SecretTarget, key: string | null, text: string): Promise<void>;
}

export function createSecretManagers(network: SecretNetwork, backends?: Partial<Record<string, SecretBackend>>) {
  const byType: Record<SecretTarget['managerType'], SecretBackend> = {
    aws_sm: backends?.aws_sm ?? createAwsSecretsManager(network),
    azure_kv: backends?.azure_kv ?? createAzureKeyVault(network),
    hashicorp_vault: backends?.hashicorp_vault ?? createHashicorpVault(network),
  };

  function backendFor(target: SecretTarget): SecretBackend {
    if (!network.ambientCredentials && usesAmbientIdentity(target.auth))
      throw new SecretManagerError(
        'invalid',
        `Secret reference ${target.slug} signs in with the server's own identity (${authMethodOf(target.auth)}), which this server does not allow (secret_manager_ambient_credentials is off).`,
      );
    return byType[target.managerType];
  }

  const managers: SecretManagers = {
    read: (target) => backendFor(target).read(target),

    async write(target, key, text) {
      const backend = backendFor(target);
      let current: SecretValue | null = null;
      if (key !== null || target.managerType === 'hashicorp_vault') {
        try {
          current = await backend.read(target);
        } catch (error) {
          if (!(error instanceof SecretManagerError) || error.kind !== 'not_found') throw error;
        }
      }
      await backend.write(target, withSecret(current, key, text, `Secret ${target.secretPath}`));
    },
  };
  return managers;
}
