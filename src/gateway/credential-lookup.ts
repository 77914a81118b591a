import type { Principal } from '../auth/principal.js';
import type { CredentialLimits } from '../limits/credential-limits.js';

/**
 * The gateway's port to stored credentials (`@provider` slugs, virtual keys) and to the model
 * catalogue (which models a provider allows, model aliases). The control plane owns them and
 * implements this; the gateway depends only on the shape.
 */
export interface CredentialLookup {
  /** `param` names where the slug came from in a refusal (`x-service-provider` unless given). */
  resolveProvider(principal: Principal, workspaceId: string, slug: string, param?: string): Promise<ResolvedCredential>;
  resolveVirtualKey(principal: Principal, workspaceId: string, slug: string): Promise<ResolvedCredential>;
  /** The workspace's active stored providers (no secrets): what `GET /v1/models` lists. */
  listProviders(principal: Principal, workspaceId: string): Promise<ReachableProvider[]>;
  /** The alias a plain model name means for this workspace (its own first, then the organisation's), or null. */
  resolveAlias(principal: Principal, workspaceId: string, name: string): Promise<ModelAlias | null>;
  /** Every alias the workspace sees (its own, and the organisation's it does not shadow). */
  listAliases(principal: Principal, workspaceId: string): Promise<ModelAlias[]>;
  /**
   * After the provider refused a credential with fields read from a secret manager (401): the
   * credential with those fields read again, or null when they did not change (a retry would
   * not help).
   */
  refreshSecrets(credential: ResolvedCredential): Promise<ResolvedCredential | null>;
}

/**
 * Which models a stored provider allows: its integration's catalogue. A listed model is allowed
 * when enabled; a model not listed, when `allowAll`.
 */
export interface ModelPolicy {
  allowAll: boolean;
  /** Model slug → enabled, for each model the catalogue lists. */
  entries: ReadonlyMap<string, boolean>;
}

/** `model: "<name>"` as an alias: to `@slug/model`, or to a stored config (by id). */
export interface ModelAlias {
  name: string;
  model: string | null;
  configId: string | null;
  scope: 'workspace' | 'organisation';
  createdAt: string;
}

/** A stored provider a key can reach, by slug and registry type. */
export interface ReachableProvider {
  slug: string;
  providerType: string;
  createdAt: string;
  models: ModelPolicy;
}

/** What the gateway needs to call a provider with a stored credential. */
export interface ResolvedCredential {
  /** Registry id (`getProvider`). */
  providerType: string;
  /** The decrypted provider key; null when the credential has none (local servers). */
  apiKey: string | null;
  customHost: string | null;
  /** Every stored setting, secret fields decrypted (azure_resource_name, custom_headers, …). */
  configurations: Readonly<Record<string, unknown>>;
  source: { kind: 'provider' | 'virtual_key'; id: string; slug: string; integrationId: string | null };
  /** The integration's model catalogue; null for a virtual key (it has none: every model). */
  models: ModelPolicy | null;
  /** Some fields (the key, settings) were read from a secret manager (`secret_mappings`). */
  fromSecretManager: boolean;
  /** Its expiry, rate limits and budget, checked on each attempt sent with it; null when it has none. */
  limits: CredentialLimits | null;
}
