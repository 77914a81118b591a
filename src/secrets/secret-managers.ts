import { authMethodOf, usesAmbientIdentity } from './auth-config.js';
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

type ManagerType = SecretTarget['managerType'];

/**
 * Each vendor's SDK is loaded when a reference of its kind is first used: together they hold tens
 * of megabytes that a server without secret references should not carry.
 */
const LOADERS: Record<ManagerType, (network: SecretNetwork) => Promise<SecretBackend>> = {
  aws_sm: async (network) => (await import('./aws-secrets-manager.js')).createAwsSecretsManager(network),
  azure_kv: async (network) => (await import('./azure-key-vault.js')).createAzureKeyVault(network),
  hashicorp_vault: async (network) => (await import('./hashicorp-vault.js')).createHashicorpVault(network),
};

export function createSecretManagers(network: SecretNetwork, backends?: Partial<Record<string, SecretBackend>>) {
  const loaded = new Map<ManagerType, Promise<SecretBackend>>();

  function backendOf(type: ManagerType): Promise<SecretBackend> {
    let backend = loaded.get(type);
    if (!backend) {
      const given = backends?.[type];
      backend = given ? Promise.resolve(given) : LOADERS[type](network);
      loaded.set(type, backend);
    }
    return backend;
  }

  async function backendFor(target: SecretTarget): Promise<SecretBackend> {
    if (!network.ambientCredentials && usesAmbientIdentity(target.auth))
      throw new SecretManagerError(
        'invalid',
        `Secret reference ${target.slug} signs in with the server's own identity (${authMethodOf(target.auth)}), which this server does not allow (secret_manager_ambient_credentials is off).`,
      );
    return backendOf(target.managerType);
  }

  const managers: SecretManagers = {
    read: async (target) => (await backendFor(target)).read(target),

    async write(target, key, text) {
      const backend = await backendFor(target);
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
