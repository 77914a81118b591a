import type { Principal } from '../auth/principal.js';

/**
 * The gateway's port to stored credentials (`@provider` slugs, virtual keys). The control plane
 * owns them and implements this; the gateway depends only on the shape.
 */
export interface CredentialLookup {
  resolveProvider(principal: Principal, workspaceId: string, slug: string): Promise<ResolvedCredential>;
  resolveVirtualKey(principal: Principal, workspaceId: string, slug: string): Promise<ResolvedCredential>;
  /** The workspace's active stored providers (no secrets): what `GET /v1/models` lists. */
  listProviders(principal: Principal, workspaceId: string): Promise<ReachableProvider[]>;
}

/** A stored provider a key can reach, by slug and registry type. */
export interface ReachableProvider {
  slug: string;
  providerType: string;
  createdAt: string;
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
}
