import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { IntegrationRepository, IntegrationRow } from '../../storage/repositories/integrations.js';
import type {
  IntegrationWorkspaceRepository,
  IntegrationWorkspaceRow,
} from '../../storage/repositories/integration-workspaces.js';
import type { ProviderRepository, ProviderRow } from '../../storage/repositories/providers.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import { RESERVED_PROVIDER_SLUGS } from '../credentials/schemas.js';
import type { PutWorkspaceAccessBody, WorkspaceAccessObject } from './workspace-schemas.js';

/** More workspaces than an organisation has: the reference lists them all, without pages. */
const ALL = 100_000;

/**
 * Which workspaces may use an integration. A workspace's own setting wins; without one, the
 * integration's `global_workspace_access` applies (every workspace, as before this existed).
 * A workspace that may not use it can make no provider from it, and its providers stop
 * resolving at once (the gateway answers as for an unknown provider).
 */
export function createIntegrationWorkspaceService(deps: {
  integrations: IntegrationRepository;
  access: IntegrationWorkspaceRepository;
  providers: ProviderRepository;
  workspaces: WorkspaceRepository;
  clock: Clock;
  onChange: () => void;
}) {
  async function find(principal: Principal, idOrSlug: string): Promise<IntegrationRow> {
    if (!isOrgAdmin(principal))
      throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins manage integrations.');
    const row = await deps.integrations.findByIdOrSlug(principal.organisationId, idOrSlug);
    if (!row) throw notFound(`Integration ${idOrSlug}`);
    return row;
  }

  /** The provider to make in a workspace just enabled, or null when it has one or none is wanted. */
  async function defaultProvider(
    integration: IntegrationRow,
    workspace: WorkspaceRow,
    choice: { create: boolean; slug: string | undefined; param: string },
    stamp: string,
  ): Promise<ProviderRow | null> {
    if (!choice.create || (await deps.providers.hasActiveOfIntegration(workspace.id, integration.id))) return null;
    const slug = choice.slug ?? integration.slug;
    if (RESERVED_PROVIDER_SLUGS.has(slug)) throw invalid(choice.param, `The provider slug ${slug} is reserved.`);
    if (await deps.providers.slugTaken(workspace.id, slug))
      throw new AppError(
        'CONFLICT',
        `Workspace ${workspace.slug} already has a provider with slug ${slug}; choose another default_provider_slug, or create_default_provider: false.`,
        { param: choice.param },
      );
    return {
      id: newId(),
      organisation_id: integration.organisation_id,
      workspace_id: workspace.id,
      integration_id: integration.id,
      slug,
      name: integration.name,
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

  return {
    async get(principal: Principal, idOrSlug: string): Promise<WorkspaceAccessObject> {
      const integration = await find(principal, idOrSlug);
      const own = new Map((await deps.access.list(integration.id)).map((row) => [row.workspace_id, row.enabled === 1]));
      const all = integration.all_workspaces === 1;
      const { total, rows } = await deps.workspaces.list({
        organisationId: principal.organisationId,
        statuses: ['active'],
        limit: ALL,
        offset: 0,
      });
      return {
        total,
        workspaces: rows.map((w) => ({
          id: w.id,
          slug: w.slug,
          enabled: own.get(w.id) ?? all,
          usage_limits: null,
          rate_limits: null,
        })),
        global_workspace_access: { enabled: all },
      };
    },

    async put(principal: Principal, idOrSlug: string, body: PutWorkspaceAccessBody): Promise<IntegrationRow> {
      const integration = await find(principal, idOrSlug);
      if (integration.status !== 'active')
        throw invalid('slug', `Integration ${integration.slug} is archived and cannot be changed.`);
      const stamp = new Date(deps.clock.now()).toISOString();
      const rows: IntegrationWorkspaceRow[] = [];
      const providers: ProviderRow[] = [];
      const seen = new Set<string>();
      for (const [i, entry] of (body.workspaces ?? []).entries()) {
        const param = `workspaces[${i}].id`;
        const workspace = await deps.workspaces.findByIdOrSlug(principal.organisationId, entry.id);
        if (!workspace) throw new AppError('NOT_FOUND', `Workspace ${entry.id} not found.`, { param });
        if (workspace.status !== 'active') throw invalid(param, `Workspace ${workspace.slug} is archived.`);
        if (seen.has(workspace.id)) throw invalid(param, `Workspace ${workspace.slug} is listed twice.`);
        seen.add(workspace.id);
        rows.push({
          integration_id: integration.id,
          workspace_id: workspace.id,
          organisation_id: integration.organisation_id,
          enabled: entry.enabled ? 1 : 0,
          created_at: stamp,
          last_updated_at: stamp,
        });
        if (!entry.enabled) continue;
        const made = await defaultProvider(
          integration,
          workspace,
          {
            create: entry.create_default_provider ?? body.create_default_provider ?? true,
            slug: entry.default_provider_slug ?? body.default_provider_slug,
            param:
              entry.default_provider_slug !== undefined
                ? `workspaces[${i}].default_provider_slug`
                : 'default_provider_slug',
          },
          stamp,
        );
        if (made) providers.push(made);
      }
      await deps.access.apply({
        integrationId: integration.id,
        allWorkspaces: body.global_workspace_access?.enabled,
        resetWorkspaces: body.override_existing_workspace_access,
        rows,
        now: stamp,
      });
      for (const provider of providers) await deps.providers.insert(provider);
      deps.onChange();
      return integration;
    },
  };
}

export type IntegrationWorkspaceService = ReturnType<typeof createIntegrationWorkspaceService>;
