import type { AuthConfig, SecretManagerType } from './auth-config.js';

/** One secret in one secret manager, with what it takes to sign in: a reference as the backends need it. */
export interface SecretTarget {
  referenceId: string;
  /** For messages and logs: the reference's slug. */
  slug: string;
  /**
   * The reference's `last_updated_at`: clients and cached values are kept per version, so a
   * changed reference (new path, new credentials) is read afresh at once.
   */
  version: string;
  managerType: SecretManagerType;
  auth: AuthConfig;
  secretPath: string;
}

/**
 * A secret as its manager holds it: text (AWS Secrets Manager's SecretString, a Key Vault
 * secret) or a map of fields (a Vault KV entry).
 */
export type SecretValue = string | Readonly<Record<string, unknown>>;

/** One secret manager's wire, through its vendor's client library. */
export interface SecretBackend {
  /** Reads the current value; `SecretManagerError` with kind `not_found` when there is none. */
  read(target: SecretTarget): Promise<SecretValue>;
  /** Writes a new value (a new version where the manager keeps versions). */
  write(target: SecretTarget, value: SecretValue): Promise<void>;
}

/** What went wrong, as far as a client can act on it. */
export type SecretFailure = 'not_found' | 'denied' | 'unreachable' | 'invalid' | 'failed';

/**
 * A secret manager could not be read or written. The message names the reference and what the
 * manager said, never a secret: vendor messages quote ids and paths, not values.
 */
export class SecretManagerError extends Error {
  constructor(
    readonly kind: SecretFailure,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SecretManagerError';
  }
}

/** How the server reaches secret managers: settings shared by every backend. */
export interface SecretNetwork {
  /** Extra trusted CA certificates (PEM), added to Node's own; null: Node's only. */
  extraCa: string | null;
  timeoutMs: number;
  /** Whether serviceRole, assumedRole, managed, default and kubernetes sign-ins may use the server's identity. */
  ambientCredentials: boolean;
  /** Azure Key Vault: check that the sign-in challenge's resource is the vault's domain (the SDK's default). */
  azureChallengeVerification: boolean;
  /** The Kubernetes service-account token sent to Vault's kubernetes login. */
  kubernetesTokenPath: string;
  now: () => number;
}
