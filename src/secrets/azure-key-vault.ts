import {
  ClientSecretCredential,
  DefaultAzureCredential,
  ManagedIdentityCredential,
  type TokenCredential,
} from '@azure/identity';
import { SecretClient } from '@azure/keyvault-secrets';
import type { AzureAuth } from './auth-config.js';
import { trustedCa, VersionedCache } from './clients.js';
import { SecretManagerError, type SecretBackend, type SecretNetwork, type SecretTarget } from './types.js';

/**
 * Azure Key Vault through Azure's own libraries: the Key Vault client's challenge-based sign-in
 * and the Entra token exchange (client credentials, managed identity, the default chain) are
 * theirs. One client per reference version, so that tokens are cached until they expire.
 */
export function createAzureKeyVault(network: SecretNetwork): SecretBackend {
  const clients = new VersionedCache<SecretClient>();
  const tlsOptions = network.extraCa ? { tlsOptions: { ca: trustedCa(network.extraCa) } } : {};
  const retryOptions = { maxRetries: 1 };

  function credentialOf(auth: AzureAuth): TokenCredential {
    switch (auth.azure_auth_mode) {
      case 'entra':
        return new ClientSecretCredential(
          auth.azure_entra_tenant_id,
          auth.azure_entra_client_id,
          auth.azure_entra_client_secret,
          {
            ...(auth.azure_authority_host ? { authorityHost: auth.azure_authority_host } : {}),
            // The authority is taken as given (sovereign clouds, Azure Stack): no call to the public cloud's discovery.
            disableInstanceDiscovery: true,
            retryOptions,
            ...tlsOptions,
          },
        );
      case 'managed':
        return new ManagedIdentityCredential({
          ...(auth.azure_managed_client_id ? { clientId: auth.azure_managed_client_id } : {}),
          retryOptions,
          ...tlsOptions,
        });
      case 'default':
        return new DefaultAzureCredential({ disableInstanceDiscovery: true, retryOptions, ...tlsOptions });
    }
  }

  function clientFor(target: SecretTarget): SecretClient {
    return clients.get(target, () => {
      const auth = target.auth as AzureAuth;
      return new SecretClient(auth.azure_vault_url, credentialOf(auth), {
        disableChallengeResourceVerification: !network.azureChallengeVerification,
        retryOptions,
        ...tlsOptions,
      });
    });
  }

  return {
    async read(target) {
      try {
        const secret = await clientFor(target).getSecret(target.secretPath, {
          abortSignal: AbortSignal.timeout(network.timeoutMs),
        });
        if (secret.value === undefined)
          throw new SecretManagerError('not_found', `Key Vault secret ${target.secretPath} has no value.`);
        return secret.value;
      } catch (error) {
        throw failure(error, target, 'read');
      }
    },

    async write(target, value) {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      try {
        await clientFor(target).setSecret(target.secretPath, text, {
          abortSignal: AbortSignal.timeout(network.timeoutMs),
        });
      } catch (error) {
        throw failure(error, target, 'write');
      }
    },
  };
}

function failure(error: unknown, target: SecretTarget, verb: 'read' | 'write'): SecretManagerError {
  if (error instanceof SecretManagerError) return error;
  const err = error as { name?: string; message?: string; statusCode?: number; code?: string };
  const kind =
    err.statusCode === 404
      ? 'not_found'
      : err.statusCode === 401 || err.statusCode === 403 || err.name === 'AuthenticationError'
        ? 'denied'
        : err.name === 'CredentialUnavailableError' || err.name === 'AbortError'
          ? 'unreachable'
          : /ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EAI_AGAIN/.test(`${err.code ?? ''}`)
            ? 'unreachable'
            : 'failed';
  // Identity errors carry a long troubleshooting text after the first line.
  const message = (err.message ?? String(error)).split('\n')[0];
  return new SecretManagerError(
    kind,
    `Azure Key Vault could not ${verb} ${target.secretPath}: ${err.name ?? 'Error'}: ${message}`,
    { cause: error },
  );
}
