import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { nameOrMasked } from '../../lib/mask.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Db } from '../../storage/database.js';
import { createIntegrationModelRepository } from '../../storage/repositories/integration-models.js';
import { createModelAliasRepository } from '../../storage/repositories/model-aliases.js';
import { createProviderRepository } from '../../storage/repositories/providers.js';
import { createSecretReferenceRepository } from '../../storage/repositories/secret-references.js';
import { createVirtualKeyRepository, type VirtualKeyRow } from '../../storage/repositories/virtual-keys.js';
import type { SecretCache } from '../../secrets/secret-cache.js';
import { credentialLimitsOf, type CredentialLimits } from '../../limits/credential-limits.js';
import type { Logger } from '../../telemetry/logger.js';
import { assertWorkspaceReachable } from '../shared/workspace-access.js';
import type { ModelPolicy, ReachableProvider, ResolvedCredential } from '../../gateway/credential-lookup.js';
import { createAliasCache, modelPolicies, modelPolicy } from './catalogue.js';
import { openConfigurations } from './secrets.js';
import { createSecretFields, type LoadedCredential, type MappedField } from './secret-fields.js';

export type { ResolvedCredential };

export const DEFAULT_CREDENTIAL_TTL_MS = 60_000;
const SLUG_RE = /^[a-zA-Z0-9_-]{1,255}$/;

interface Entry {
  value: LoadedCredential;
  loadedAt: number;
}

/**
 * The gateway's hot-path lookup of `@provider` and virtual-key slugs. Resolved credentials
 * (decrypted) stay in memory for `ttlMs`, so that a request reads no database and decrypts
 * nothing; changes made through this instance's admin routes call `invalidateAll` at once,
 * and the TTL bounds how long another instance's change takes to be seen. Only hits are
 * kept: an unknown slug is looked up every time (an indexed read), so a typo cannot fill memory.
 *
 * Providers are the newer name for virtual keys, so each lookup falls back to the other kind
 * in the same workspace: `@slug` finds a virtual key, and `x-service-virtual-key` a provider.
 *
 * Fields mapped to secret references are not kept here: each lookup takes them from the
 * secret cache (see secret-fields.ts), which reads them from their manager when needed.
 */
export function createCredentialResolver(deps: {
  db: Db;
  secretBox: SecretBox;
  clock: Clock;
  secrets: SecretCache;
  logger?: Logger;
  ttlMs?: number;
}) {
  const providers = createProviderRepository(deps.db);
  const virtualKeys = createVirtualKeyRepository(deps.db);
  const integrationModels = createIntegrationModelRepository(deps.db);
  const secretFields = createSecretFields({
    references: createSecretReferenceRepository(deps.db),
    secretBox: deps.secretBox,
    cache: deps.secrets,
    logger: deps.logger,
  });
  const ttlMs = deps.ttlMs ?? DEFAULT_CREDENTIAL_TTL_MS;
  const aliases = createAliasCache({ aliases: createModelAliasRepository(deps.db), clock: deps.clock, ttlMs });
  const cache = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<LoadedCredential | null>>();
  // Bumped by invalidateAll, so that a load that started before a change cannot cache its stale result.
  let generation = 0;

  function cached(key: string, load: () => Promise<LoadedCredential | null>): Promise<LoadedCredential | null> {
    const hit = cache.get(key);
    if (hit && deps.clock.now() - hit.loadedAt < ttlMs) return Promise.resolve(hit.value);
    const pending = inFlight.get(key);
    if (pending) return pending;
    const startedIn = generation;
    const loading = load()
      .then((value) => {
        if (startedIn === generation) {
          if (value) cache.set(key, { value, loadedAt: deps.clock.now() });
          else cache.delete(key);
        }
        return value;
      })
      .finally(() => {
        if (inFlight.get(key) === loading) inFlight.delete(key);
      });
    inFlight.set(key, loading);
    return loading;
  }

  async function loadProvider(
    organisationId: string,
    workspaceId: string,
    slug: string,
    param: string,
  ): Promise<LoadedCredential | null> {
    const row = await providers.findActiveForGateway(organisationId, workspaceId, slug);
    if (!row || row.integration_status !== 'active') return null;
    const models = modelPolicy(row.allow_all_models, await integrationModels.list(row.integration_id));
    const fields = await secretFields.load(
      organisationId,
      workspaceId,
      row.secret_mappings,
      `provider @${row.slug}`,
      param,
    );
    return build(
      row.ai_provider_id,
      row.encrypted_key,
      row.configurations,
      { kind: 'provider', id: row.id, slug: row.slug, integrationId: row.integration_id },
      models,
      fields,
      credentialLimitsOf('provider', row),
    );
  }

  async function loadVirtualKey(
    organisationId: string,
    workspaceId: string,
    slug: string,
    param: string,
  ): Promise<LoadedCredential | null> {
    const row: VirtualKeyRow | undefined = await virtualKeys.findActiveBySlug(organisationId, slug);
    if (!row || row.workspace_id !== workspaceId) return null;
    const fields = await secretFields.load(
      organisationId,
      workspaceId,
      row.secret_mappings,
      `virtual key ${row.slug}`,
      param,
    );
    return build(
      row.provider,
      row.encrypted_key,
      row.configurations,
      { kind: 'virtual_key', id: row.id, slug: row.slug, integrationId: null },
      null,
      fields,
      credentialLimitsOf('virtual_key', row),
    );
  }

  function build(
    providerType: string,
    encryptedKey: string | null,
    storedConfig: string,
    source: ResolvedCredential['source'],
    models: ModelPolicy | null,
    fields: MappedField[],
    limits: CredentialLimits | null,
  ): LoadedCredential {
    const configurations = Object.freeze(openConfigurations(deps.secretBox, storedConfig));
    const base = Object.freeze({
      providerType,
      apiKey: encryptedKey === null ? null : deps.secretBox.decrypt(encryptedKey),
      customHost: typeof configurations.custom_host === 'string' ? configurations.custom_host : null,
      configurations,
      source: Object.freeze(source),
      models,
      fromSecretManager: fields.length > 0,
      limits,
    });
    return { base, fields };
  }

  function checkAccess(principal: Principal, workspaceId: string, slug: string, param: string, what: string): void {
    assertWorkspaceReachable(principal, workspaceId);
    // Not echoed: a malformed value may be a key pasted into the wrong header.
    if (!SLUG_RE.test(slug))
      throw new AppError(
        'NOT_FOUND',
        `${what} not found: ${param} does not hold a valid slug (letters, digits, - and _).`,
        { param },
      );
  }

  return {
    /** `x-service-provider: @slug` (the `@` already stripped), or the `@slug` of `model: "@slug/model"` (param `model`). */
    async resolveProvider(
      principal: Principal,
      workspaceId: string,
      slug: string,
      param = 'x-service-provider',
    ): Promise<ResolvedCredential> {
      checkAccess(principal, workspaceId, slug, param, 'Provider');
      const org = principal.organisationId;
      const found = await cached(
        `provider:${org}:${workspaceId}:${slug}`,
        async () =>
          (await loadProvider(org, workspaceId, slug, param)) ?? (await loadVirtualKey(org, workspaceId, slug, param)),
      );
      if (!found) throw notFound('Provider', `@${nameOrMasked(slug)}`, param);
      return secretFields.apply(found, param);
    },

    /** `x-service-virtual-key: slug`. */
    async resolveVirtualKey(principal: Principal, workspaceId: string, slug: string): Promise<ResolvedCredential> {
      const param = 'x-service-virtual-key';
      checkAccess(principal, workspaceId, slug, param, 'Virtual key');
      const org = principal.organisationId;
      const found = await cached(
        `virtual_key:${org}:${workspaceId}:${slug}`,
        async () =>
          (await loadVirtualKey(org, workspaceId, slug, param)) ?? (await loadProvider(org, workspaceId, slug, param)),
      );
      if (!found) throw notFound('Virtual key', nameOrMasked(slug), param);
      return secretFields.apply(found, param);
    },

    /** A credential whose secret-manager fields a provider refused, with those fields read again (null: unchanged). */
    refreshSecrets: (credential: ResolvedCredential): Promise<ResolvedCredential | null> =>
      secretFields.refresh(
        credential,
        credential.source.kind === 'virtual_key' ? 'x-service-virtual-key' : 'x-service-provider',
      ),

    /** Active providers of the workspace; read each time (a list, not the hot path). */
    async listProviders(principal: Principal, workspaceId: string): Promise<ReachableProvider[]> {
      assertWorkspaceReachable(principal, workspaceId);
      const rows = await providers.listActiveForGateway(principal.organisationId, workspaceId);
      const policies = await modelPolicies(
        integrationModels,
        rows.map((row) => ({ id: row.integration_id, allowAllModels: row.allow_all_models })),
      );
      return rows.map((row) => ({
        slug: row.slug,
        providerType: row.ai_provider_id,
        createdAt: row.created_at,
        models: policies.get(row.integration_id)!,
      }));
    },

    /** A plain model name as an alias of the workspace or the organisation. */
    async resolveAlias(principal: Principal, workspaceId: string, name: string) {
      assertWorkspaceReachable(principal, workspaceId);
      return aliases.resolve(principal, workspaceId, name);
    },

    async listAliases(principal: Principal, workspaceId: string) {
      assertWorkspaceReachable(principal, workspaceId);
      return aliases.list(principal, workspaceId);
    },

    /** Forget every resolved credential and alias, after any change to integrations, their models, providers, virtual keys or aliases. */
    invalidateAll(): void {
      generation += 1;
      cache.clear();
      inFlight.clear();
      aliases.invalidateAll();
    },
  };
}

export type CredentialResolver = ReturnType<typeof createCredentialResolver>;

/** The name comes masked: a slug-shaped value may still be a provider key sent in the wrong header. */
function notFound(what: string, name: string, param: string): AppError {
  return new AppError(
    'NOT_FOUND',
    `${what} '${name}' (${param}) not found in this workspace (or it has been deleted).`,
    { param },
  );
}
