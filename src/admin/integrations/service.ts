import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { IntegrationRepository, IntegrationRow } from '../../storage/repositories/integrations.js';
import type { ProviderRepository, ProviderRow } from '../../storage/repositories/providers.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import { pageWindow } from '../shared/pagination.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import { checkHostConfigured, requireProviderType } from '../credentials/provider-types.js';
import { parseTagFilter, RESERVED_PROVIDER_SLUGS } from '../credentials/schemas.js';
import { maskConfigurations, sealConfigurations, sealKey } from '../credentials/secrets.js';
import { mappingsOf, type SecretMappingRules } from '../secret-references/mappings.js';
import type { IntegrationWorkspaceRepository } from '../../storage/repositories/integration-workspaces.js';
import type {
  CreateIntegrationBody,
  IntegrationDetailObject,
  IntegrationObject,
  ListIntegrationsQuery,
  UpdateIntegrationBody,
} from './schemas.js';
import { insertUnique } from '../shared/unique-insert.js';

export interface IntegrationServiceDeps {
  integrations: IntegrationRepository;
  access: Pick<IntegrationWorkspaceRepository, 'enabledCount'>;
  providers: ProviderRepository;
  workspaces: WorkspaceRepository;
  secretBox: SecretBox;
  clock: Clock;
  /** Checks `secret_mappings` (references, fields, workspaces) and gives their stored form. */
  mappings: SecretMappingRules;
  /** Called after every change, so that the gateway stops using what it resolved before. */
  onChange: () => void;
}

/**
 * Integrations are the organisation's provider credentials: only organisation owners and
 * admins see or change them. Creating one also creates its default provider in a workspace,
 * in the same transaction, so that it is usable at once as `@<slug>`.
 */
export function createIntegrationService(deps: IntegrationServiceDeps) {
  const now = () => new Date(deps.clock.now()).toISOString();

  function requireOrgAdmin(principal: Principal): void {
    if (!isOrgAdmin(principal))
      throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins manage integrations.');
  }

  async function find(principal: Principal, idOrSlug: string): Promise<IntegrationRow> {
    requireOrgAdmin(principal);
    const row = await deps.integrations.findByIdOrSlug(principal.organisationId, idOrSlug);
    if (!row) throw notFound(`Integration ${idOrSlug}`);
    return row;
  }

  async function defaultProviderWorkspace(principal: Principal, requested: string | undefined): Promise<WorkspaceRow> {
    const workspace =
      requested !== undefined
        ? await resolveWorkspace(deps.workspaces, principal, requested, { required: true })
        : await deps.integrations.findDefaultWorkspace(principal.organisationId);
    if (!workspace)
      throw invalid('workspace_id', 'The organisation has no default workspace; name one in workspace_id.');
    if (workspace.status !== 'active') throw invalid('workspace_id', `Workspace ${workspace.slug} is archived.`);
    return workspace;
  }

  return {
    async create(
      principal: Principal,
      body: CreateIntegrationBody,
    ): Promise<{ integration: IntegrationRow; provider: ProviderRow | null }> {
      requireOrgAdmin(principal);
      const definition = requireProviderType(body.ai_provider_id, 'ai_provider_id');
      const configurations = body.configurations ?? {};
      checkHostConfigured(definition, configurations, 'configurations');
      const slug = body.slug ?? slugify(body.name);
      if (await deps.integrations.slugTaken(principal.organisationId, slug)) {
        throw new AppError('CONFLICT', `An integration with slug ${slug} already exists.`, { param: 'slug' });
      }
      const stamp = now();
      const integration: IntegrationRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        slug,
        name: body.name,
        ai_provider_id: definition.name,
        description: body.description ?? null,
        ...sealKey(deps.secretBox, body.key ?? null),
        configurations: sealConfigurations(deps.secretBox, configurations),
        tags: JSON.stringify(body.tags ?? {}),
        status: 'active',
        created_at: stamp,
        last_updated_at: stamp,
        last_reset_at: null,
        allow_all_models: 1,
        all_workspaces: 1,
        secret_mappings: '[]',
      };

      let provider: ProviderRow | null = null;
      if (body.create_default_provider) {
        const workspace = await defaultProviderWorkspace(principal, body.workspace_id);
        const providerSlug = body.default_provider_slug ?? slug;
        const param = body.default_provider_slug !== undefined ? 'default_provider_slug' : 'slug';
        if (RESERVED_PROVIDER_SLUGS.has(providerSlug))
          throw invalid(param, `The provider slug ${providerSlug} is reserved; choose another default_provider_slug.`);
        if (await deps.providers.slugTaken(workspace.id, providerSlug)) {
          throw new AppError(
            'CONFLICT',
            `Workspace ${workspace.slug} already has a provider with slug ${providerSlug}; choose another default_provider_slug.`,
            { param },
          );
        }
        provider = {
          id: newId(),
          organisation_id: principal.organisationId,
          workspace_id: workspace.id,
          integration_id: integration.id,
          slug: providerSlug,
          name: body.name,
          note: null,
          tags: '{}',
          status: 'active',
          created_at: stamp,
          last_updated_at: stamp,
          last_reset_at: null,
          usage_limits: null,
          rate_limits: null,
          expires_at: null,
        };
      }

      if (body.secret_mappings)
        integration.secret_mappings = await deps.mappings.store(
          principal,
          body.secret_mappings,
          provider ? [provider.workspace_id] : [],
        );
      await insertUnique(() => deps.integrations.insertWithDefaultProvider(integration, provider), {
        param: 'slug',
        message: `The slug ${slug} (or the default provider's slug) was taken by another request at the same moment.`,
      });
      deps.onChange();
      return { integration, provider };
    },

    async list(principal: Principal, query: ListIntegrationsQuery) {
      requireOrgAdmin(principal);
      const tags = parseTagFilter(query.tags);
      const { total, rows } = await deps.integrations.list({
        organisationId: principal.organisationId,
        status: query.status,
        ...(tags ? { tags } : {}),
        ...pageWindow(query),
      });
      return { total, data: rows.map(toIntegrationObject) };
    },

    async get(principal: Principal, idOrSlug: string): Promise<IntegrationDetailObject> {
      const row = await find(principal, idOrSlug);
      return {
        ...toIntegrationObject(row),
        global_workspace_access_settings: { enabled: row.all_workspaces === 1 },
        workspace_count: await deps.access.enabledCount(row),
        pricing_adjustments: null,
      };
    },

    async update(principal: Principal, idOrSlug: string, body: UpdateIntegrationBody): Promise<IntegrationRow> {
      const row = await find(principal, idOrSlug);
      if (row.status !== 'active') throw invalid('slug', `Integration ${row.slug} is archived and cannot be changed.`);
      const patch: Partial<IntegrationRow> = { last_updated_at: now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      if (body.key !== undefined) Object.assign(patch, sealKey(deps.secretBox, body.key));
      if (body.configurations !== undefined) {
        const definition = requireProviderType(row.ai_provider_id, 'ai_provider_id');
        checkHostConfigured(definition, body.configurations, 'configurations');
        patch.configurations = sealConfigurations(deps.secretBox, body.configurations, row.configurations);
      }
      if (body.tags !== undefined) patch.tags = JSON.stringify(body.tags);
      if (body.secret_mappings !== undefined)
        patch.secret_mappings = await deps.mappings.store(
          principal,
          body.secret_mappings,
          await deps.mappings.workspacesOfIntegration(row.id),
        );
      await deps.integrations.update(row.id, patch);
      deps.onChange();
      return { ...row, ...patch };
    },

    /** Deleting archives the integration and its providers: none of them resolves any more, and the slugs are free again. */
    async archive(principal: Principal, idOrSlug: string): Promise<IntegrationRow> {
      const row = await find(principal, idOrSlug);
      if (row.status !== 'archived') {
        await deps.integrations.archiveWithProviders(row.id, now());
        deps.onChange();
      }
      return row;
    },
  };
}

export type IntegrationService = ReturnType<typeof createIntegrationService>;

export function toIntegrationObject(row: IntegrationRow): IntegrationObject {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    slug: row.slug,
    name: row.name,
    ai_provider_id: row.ai_provider_id,
    description: row.description,
    masked_key: row.key_hint,
    configurations: maskConfigurations(row.configurations),
    tags: JSON.parse(row.tags) as Record<string, string>,
    status: row.status,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    last_reset_at: row.last_reset_at,
    allow_all_models: row.allow_all_models === 1,
    secret_mappings: mappingsOf(row.secret_mappings),
    object: 'integration',
  };
}
