import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import { type IntegrationRepository } from '../../storage/repositories/integrations.js';
import type { ProviderRepository, ProviderRow, ProviderWithType } from '../../storage/repositories/providers.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import type { IntegrationWorkspaceRepository } from '../../storage/repositories/integration-workspaces.js';
import { parseTagFilter, RESERVED_PROVIDER_SLUGS } from '../credentials/schemas.js';
import { credentialWorkspace } from '../credentials/workspace.js';
import { limitFieldsOf, limitPatch, newLimitColumns, shownStatus } from '../credentials/limits.js';
import type { SecretMappingRules } from '../secret-references/mappings.js';
import { pageWindow } from '../shared/pagination.js';
import { assertWorkspaceReachable, resolveWorkspace } from '../shared/workspace-access.js';
import type { CreateProviderBody, ListProvidersQuery, ProviderObject, UpdateProviderBody } from './schemas.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';

/**
 * Providers are a workspace's named handles on organisation integrations (`@slug` in the
 * gateway). Workspace keys reach only their own workspace; admin keys reach every workspace
 * and fall back to the default one when they name none.
 */
export function createProviderService(deps: {
  providers: ProviderRepository;
  integrations: IntegrationRepository;
  integrationWorkspaces: IntegrationWorkspaceRepository;
  workspaces: WorkspaceRepository;
  clock: Clock;
  mappings: SecretMappingRules;
  onChange: () => void;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();

  async function find(
    principal: Principal,
    idOrSlug: string,
    workspaceId: string | undefined,
  ): Promise<ProviderWithType> {
    const workspace = await credentialWorkspace(deps.workspaces, deps.integrations, principal, workspaceId);
    const row = await deps.providers.findByIdOrSlug(principal.organisationId, workspace.id, idOrSlug);
    if (!row) throw notFound(`Provider ${idOrSlug}`);
    assertWorkspaceReachable(principal, row.workspace_id);
    // An id names one provider; a workspace_id that disagrees with it is a mistake, not a filter.
    if (workspaceId !== undefined && row.workspace_id !== workspace.id) throw notFound(`Provider ${idOrSlug}`);
    return row;
  }

  return {
    async create(principal: Principal, body: CreateProviderBody): Promise<ProviderRow> {
      const workspace = await credentialWorkspace(deps.workspaces, deps.integrations, principal, body.workspace_id);
      if (workspace.status !== 'active') throw invalid('workspace_id', `Workspace ${workspace.slug} is archived.`);
      const integration = await deps.integrations.findByIdOrSlug(principal.organisationId, body.integration_id);
      if (!integration || integration.status !== 'active') {
        throw new AppError('NOT_FOUND', `Integration ${body.integration_id} not found (or archived).`, {
          param: 'integration_id',
        });
      }
      if (!(await deps.integrationWorkspaces.enabledIn(integration, workspace.id)))
        throw new AppError(
          'INTEGRATION_NOT_ENABLED',
          `Integration ${integration.slug} is not enabled for workspace ${workspace.slug}; enable it with PUT /v1/integrations/${integration.slug}/workspaces.`,
          { param: 'integration_id' },
        );
      // The integration's secret references must let this workspace read them.
      await deps.mappings.assertUsableIn(principal, integration.secret_mappings, workspace.id, 'integration_id');
      const slug = body.slug ?? slugify(body.name);
      if (RESERVED_PROVIDER_SLUGS.has(slug))
        throw invalid('slug', `The provider slug ${slug} is reserved (it names the path /v1/providers/${slug}).`);
      if (await deps.providers.slugTaken(workspace.id, slug)) {
        throw new AppError('CONFLICT', `Workspace ${workspace.slug} already has a provider with slug ${slug}.`, {
          param: 'slug',
        });
      }
      const stamp = now();
      const row: ProviderRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace.id,
        integration_id: integration.id,
        slug,
        name: body.name,
        note: body.note ?? null,
        tags: JSON.stringify(body.tags ?? {}),
        status: 'active',
        created_at: stamp,
        last_updated_at: stamp,
        last_reset_at: null,
        ...newLimitColumns(body, deps.clock.now()),
      };
      await insertUnique(() => deps.providers.insert(row), slugTaken(slug));
      deps.onChange();
      return row;
    },

    /** Without workspace_id, an admin key lists the providers of every workspace. */
    async list(principal: Principal, query: ListProvidersQuery) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const tags = parseTagFilter(query.tags);
      const { total, rows } = await deps.providers.list({
        organisationId: principal.organisationId,
        ...(workspace ? { workspaceId: workspace.id } : {}),
        status: query.status,
        ...(tags ? { tags } : {}),
        ...pageWindow(query),
      });
      return { total, data: rows.map((row) => toProviderObject(row, deps.clock.now())) };
    },

    get: async (principal: Principal, idOrSlug: string, workspaceId: string | undefined) =>
      toProviderObject(await find(principal, idOrSlug, workspaceId), deps.clock.now()),

    async update(
      principal: Principal,
      idOrSlug: string,
      workspaceId: string | undefined,
      body: UpdateProviderBody,
    ): Promise<ProviderRow> {
      const row = await find(principal, idOrSlug, workspaceId);
      if (row.status !== 'active') throw invalid('slug', `Provider ${row.slug} is archived and cannot be changed.`);
      const patch: Partial<ProviderRow> = { last_updated_at: now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.note !== undefined) patch.note = body.note;
      if (body.tags !== undefined) patch.tags = JSON.stringify(body.tags);
      Object.assign(patch, limitPatch(row, body, deps.clock.now()));
      await deps.providers.update(row.id, patch);
      deps.onChange();
      return { ...row, ...patch };
    },

    /** Deleting archives: the provider stops resolving at once and its slug is free again. */
    async archive(principal: Principal, idOrSlug: string, workspaceId: string | undefined): Promise<ProviderRow> {
      const row = await find(principal, idOrSlug, workspaceId);
      if (row.status !== 'archived') {
        await deps.providers.update(row.id, { status: 'archived', last_updated_at: now() });
        deps.onChange();
      }
      return row;
    },
  };
}

export type ProviderService = ReturnType<typeof createProviderService>;

export function toProviderObject(row: ProviderWithType, now: number): ProviderObject {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    integration_id: row.integration_id,
    ai_provider_id: row.ai_provider_id,
    slug: row.slug,
    name: row.name,
    note: row.note,
    tags: JSON.parse(row.tags) as Record<string, string>,
    status: shownStatus(row.status, row.expires_at, now),
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    last_reset_at: row.last_reset_at,
    ...limitFieldsOf(row),
    object: 'provider',
  };
}
