import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { createLoadingCache } from '../../lib/loading-cache.js';
import type { ModelAlias, ModelPolicy } from '../../gateway/credential-lookup.js';
import type { IntegrationModelRepository, IntegrationModelRow } from '../../storage/repositories/integration-models.js';
import type { ModelAliasRepository, ModelAliasRow } from '../../storage/repositories/model-aliases.js';

/** An integration's catalogue as the gateway checks it. */
export function modelPolicy(allowAllModels: number, rows: readonly Pick<IntegrationModelRow, 'slug' | 'enabled'>[]) {
  const policy: ModelPolicy = {
    allowAll: allowAllModels === 1,
    entries: new Map(rows.map((row) => [row.slug, row.enabled === 1])),
  };
  return Object.freeze(policy);
}

/** The policies of several integrations, read in one query. */
export async function modelPolicies(
  repo: IntegrationModelRepository,
  integrations: ReadonlyArray<{ id: string; allowAllModels: number }>,
): Promise<Map<string, ModelPolicy>> {
  const rows = await repo.listFor([...new Set(integrations.map((i) => i.id))]);
  const byIntegration = new Map<string, IntegrationModelRow[]>();
  for (const row of rows)
    byIntegration.set(row.integration_id, [...(byIntegration.get(row.integration_id) ?? []), row]);
  return new Map(integrations.map((i) => [i.id, modelPolicy(i.allowAllModels, byIntegration.get(i.id) ?? [])]));
}

const toAlias = (row: ModelAliasRow): ModelAlias =>
  Object.freeze({
    name: row.name,
    model: row.target_model,
    configId: row.config_id,
    scope: row.workspace_id === null ? 'organisation' : 'workspace',
    createdAt: row.created_at,
  });

/**
 * The aliases a workspace sees, kept in memory per workspace for `ttlMs` (a workspace has few):
 * its own, and the organisation's whose name it does not use itself. A plain model name is then
 * a map lookup on the hot path, found or not.
 */
export function createAliasCache(deps: { aliases: ModelAliasRepository; clock: Clock; ttlMs: number }) {
  const cache = createLoadingCache<Map<string, ModelAlias>>({ clock: deps.clock, ttlMs: deps.ttlMs });

  const load = (principal: Principal, workspaceId: string): Promise<Map<string, ModelAlias>> =>
    cache.get(`${principal.organisationId}:${workspaceId}`, async () => {
      const rows = await deps.aliases.listScopes(principal.organisationId, [workspaceId, principal.organisationId]);
      const byName = new Map<string, ModelAlias>();
      // Workspace aliases shadow the organisation's of the same name.
      for (const row of rows) if (row.workspace_id !== null) byName.set(row.name, toAlias(row));
      for (const row of rows)
        if (row.workspace_id === null && !byName.has(row.name)) byName.set(row.name, toAlias(row));
      return byName;
    });

  return {
    resolve: async (principal: Principal, workspaceId: string, name: string) =>
      (await load(principal, workspaceId)).get(name) ?? null,
    list: async (principal: Principal, workspaceId: string) => [...(await load(principal, workspaceId)).values()],
    invalidateAll(): void {
      cache.clear();
    },
  };
}
