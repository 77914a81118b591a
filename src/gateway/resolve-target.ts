import type { Principal } from '../auth/principal.js';
import { AppError } from '../lib/errors.js';
import type { MaybePromise } from '../lib/maybe-promise.js';
import { nameOrMasked } from '../lib/mask.js';
import { getProvider } from '../providers/registry.js';
import type { ProviderDefinition, TargetContext } from '../providers/types.js';
import type { ConfigTarget } from './config/schema.js';
import type { CredentialLookup, ModelPolicy, ResolvedCredential } from './credential-lookup.js';
import type { GatewayHeaders } from './gateway-headers.js';

export type { CredentialLookup };

/** Where one gateway request goes and with which credential. */
export interface ResolvedTarget {
  provider: ProviderDefinition;
  context: TargetContext;
  /** How the credential was chosen, for the log: `provider:<slug>`, `virtual_key:<slug>`, `direct`, `custom_host`. */
  source: string;
  /** A stored provider or virtual key: its slug and model catalogue (what `model-access` checks). */
  stored: { slug: string; models: ModelPolicy | null; credential: ResolvedCredential } | null;
}

const HOW_TO =
  'Send x-service-provider: @<provider slug>, or x-service-provider: <provider name> with Authorization: Bearer <provider key> (and x-service-custom-host for a private deployment), or x-service-virtual-key: <virtual key>.';

/**
 * Applies the spec's four credential modes: a stored provider (`@slug`), a provider name with
 * the client's own key, a custom host, or a legacy virtual key. Only a stored credential is
 * waited for: the others are resolved at once.
 */
export function resolveTarget(
  headers: GatewayHeaders,
  principal: Principal,
  workspaceId: string,
  credentials: CredentialLookup,
): MaybePromise<ResolvedTarget> {
  if (headers.provider?.startsWith('@'))
    return storedTarget(
      'provider',
      credentials.resolveProvider(principal, workspaceId, headers.provider.slice(1)),
      headers,
    );
  if (headers.provider === null && headers.virtualKey !== null)
    return storedTarget(
      'virtual_key',
      credentials.resolveVirtualKey(principal, workspaceId, headers.virtualKey),
      headers,
    );
  if (headers.provider === null)
    throw new AppError('MISSING_PROVIDER', `No provider given. ${HOW_TO}`, { param: 'x-service-provider' });

  const provider = lookup(headers.provider);
  // Adapters find their own credentials (service accounts, AWS keys) in headers or settings.
  const ownAuth =
    provider.auth.kind === 'none' ||
    provider.auth.kind === 'adapter' ||
    (provider.name === 'azure-openai' && headers.azureEntra);
  if (headers.bearer === null && headers.customHost === null && !ownAuth) {
    throw new AppError(
      'MISSING_PROVIDER',
      `x-service-provider: ${provider.name} needs the provider key in Authorization: Bearer <key>. ${HOW_TO}`,
      { param: 'authorization' },
    );
  }
  return {
    provider,
    context: { apiKey: headers.bearer, customHost: headers.customHost, azure: headers.azure },
    source: headers.customHost !== null ? 'custom_host' : 'direct',
    stored: null,
  };
}

/**
 * The target of a config leaf. A leaf without `provider` or `virtual_key` (a settings-only root)
 * uses the request's headers. A provider name takes the leaf's `api_key`, else the request's
 * own bearer key; its host is the leaf's `custom_host`, else the provider's default.
 * `providerParam` names where an `@slug` came from when it is not found (`model` for `@slug/model`).
 */
export function resolveLeafTarget(
  node: ConfigTarget | null,
  headers: GatewayHeaders,
  principal: Principal,
  workspaceId: string,
  credentials: CredentialLookup,
  providerParam?: string,
): MaybePromise<ResolvedTarget> {
  if (!node || (node.provider === undefined && node.virtual_key === undefined))
    return resolveTarget(headers, principal, workspaceId, credentials);
  if (node.provider?.startsWith('@'))
    return storedTarget(
      'provider',
      credentials.resolveProvider(principal, workspaceId, node.provider.slice(1), providerParam),
      headers,
    );
  if (node.virtual_key !== undefined)
    return storedTarget(
      'virtual_key',
      credentials.resolveVirtualKey(principal, workspaceId, node.virtual_key),
      headers,
    );
  const provider = lookup(node.provider!);
  const apiKey = node.api_key ?? headers.bearer;
  const customHost = node.custom_host ?? null;
  if (apiKey === null && customHost === null && provider.auth.kind !== 'none' && provider.auth.kind !== 'adapter') {
    throw new AppError(
      'MISSING_PROVIDER',
      `The config target for ${provider.name} has no api_key and the request sent no Authorization: Bearer <provider key>.`,
      { param: 'x-service-config' },
    );
  }
  return {
    provider,
    context: { apiKey, customHost, azure: headers.azure },
    source: customHost !== null ? 'custom_host' : 'direct',
    stored: null,
  };
}

function lookup(name: string): ProviderDefinition {
  const provider = getProvider(name);
  // Shown masked: a provider key pasted into x-service-provider must not come back in the error.
  if (!provider)
    throw new AppError(
      'UNKNOWN_PROVIDER',
      `Unknown provider '${nameOrMasked(name)}' in x-service-provider; GET /v1/providers/catalog lists them. ${HOW_TO}`,
      { param: 'x-service-provider' },
    );
  return provider;
}

/**
 * The target of a stored credential once it is read, logged as the way it was named (`@slug`:
 * `provider:`, a virtual key header: `virtual_key:`), whichever kind of record the slug found.
 */
function storedTarget(
  namedAs: 'provider' | 'virtual_key',
  stored: Promise<ResolvedCredential>,
  headers: GatewayHeaders,
): Promise<ResolvedTarget> {
  return stored.then((credential) => fromStored(credential, `${namedAs}:${credential.source.slug}`, headers));
}

/** The target of a stored credential; also its target again once its secrets were read afresh. */
export function fromStored(stored: ResolvedCredential, source: string, headers: GatewayHeaders): ResolvedTarget {
  const provider = lookup(stored.providerType);
  const config = stored.configurations;
  const text = (key: string) => (typeof config[key] === 'string' ? config[key] : undefined);
  const azure: TargetContext['azure'] = { ...headers.azure };
  const resourceName = text('azure_resource_name');
  const deploymentId = text('azure_deployment_name') ?? text('azure_deployment_id');
  const apiVersion = text('azure_api_version');
  if (resourceName) azure.resourceName = resourceName;
  if (deploymentId) azure.deploymentId = deploymentId;
  if (apiVersion) azure.apiVersion = apiVersion;
  return {
    provider,
    context: { apiKey: stored.apiKey, customHost: stored.customHost, azure, configurations: config },
    source,
    stored: { slug: stored.source.slug, models: stored.models, credential: stored },
  };
}
