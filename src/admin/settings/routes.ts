import { ADMIN_ONLY, BOTH_KEY_TYPES, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import {
  organisationSettingsBody,
  organisationSettingsObject,
  workspaceOverridesBody,
  workspaceSettingsObject,
  workspaceSettingsParams,
} from './schemas.js';
import type { SecuritySettingsService } from './security-settings.js';

const TAG = ['Settings'];
const audit = { resourceType: 'security_settings', action: 'update' };

/**
 * Security settings: the organisation's, and each workspace's overrides by category. Reading
 * needs a read scope; changing them is for organisation owners and admins (admin keys).
 */
export function registerSecuritySettingsRoutes(
  app: ZodApp,
  deps: { settings: SecuritySettingsService; workspaces: WorkspaceRepository },
): void {
  const organisationObject = (
    organisationId: string,
    value: Awaited<ReturnType<SecuritySettingsService['organisation']>>,
  ) => ({
    object: 'security_settings' as const,
    scope: 'organisation' as const,
    organisation_id: organisationId,
    settings: value.settings,
    last_updated_at: value.lastUpdatedAt,
  });
  const workspaceObject = (
    workspace: WorkspaceRow,
    value: Awaited<ReturnType<SecuritySettingsService['workspace']>>,
  ) => ({
    object: 'security_settings' as const,
    scope: 'workspace' as const,
    organisation_id: workspace.organisation_id,
    workspace_id: workspace.id,
    overrides: value.overrides as Record<string, Record<string, boolean | number | null>>,
    settings: value.settings,
    last_updated_at: value.lastUpdatedAt,
  });

  app.get(
    '/v1/settings/security',
    {
      schema: {
        tags: TAG,
        summary: "Get the organisation's security settings",
        description: 'Every setting with its value in effect (defaults included).',
        response: { 200: organisationSettingsObject },
      },
      config: { auth: { scope: 'organisations.read', keyTypes: ADMIN_ONLY } },
    },
    async (request) => {
      const { organisationId } = request.principal!;
      return organisationObject(organisationId, await deps.settings.organisation(organisationId));
    },
  );

  app.put(
    '/v1/settings/security',
    {
      schema: {
        tags: TAG,
        summary: "Change the organisation's security settings",
        description: 'Sets the settings given; the others keep their values.',
        body: organisationSettingsBody,
        response: { 200: organisationSettingsObject },
      },
      config: { auth: { scope: 'organisations.update', keyTypes: ADMIN_ONLY, roles: ORG_ADMINS }, audit },
    },
    async (request) => {
      const { organisationId } = request.principal!;
      request.auditResourceId = organisationId;
      return organisationObject(organisationId, await deps.settings.updateOrganisation(organisationId, request.body));
    },
  );

  app.get(
    '/v1/workspaces/:workspaceId/settings/security',
    {
      schema: {
        tags: TAG,
        summary: "Get a workspace's security settings",
        description:
          "The workspace's overrides and the settings in effect in it. workspaceId takes an id or a slug; a workspace key reads its own workspace.",
        params: workspaceSettingsParams,
        response: { 200: workspaceSettingsObject },
      },
      config: { auth: { scope: 'workspaces.read', keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => {
      const principal = request.principal!;
      const workspace = (await resolveWorkspace(deps.workspaces, principal, request.params.workspaceId, {
        required: true,
        param: 'workspaceId',
      }))!;
      return workspaceObject(workspace, await deps.settings.workspace(principal.organisationId, workspace.id));
    },
  );

  app.put(
    '/v1/workspaces/:workspaceId/settings/security',
    {
      schema: {
        tags: TAG,
        summary: "Change a workspace's security setting overrides",
        description:
          'By category (data_visibility, analytics, prompts, configs, user_api_keys): a category given replaces its override, null removes it, a category left out stays.',
        params: workspaceSettingsParams,
        body: workspaceOverridesBody,
        response: { 200: workspaceSettingsObject },
      },
      config: { auth: { scope: 'workspaces.update', keyTypes: ADMIN_ONLY, roles: ORG_ADMINS }, audit },
    },
    async (request) => {
      const principal = request.principal!;
      const workspace = (await resolveWorkspace(deps.workspaces, principal, request.params.workspaceId, {
        required: true,
        param: 'workspaceId',
      }))!;
      request.auditResourceId = workspace.id;
      request.auditWorkspaceId = workspace.id;
      return workspaceObject(
        workspace,
        await deps.settings.updateWorkspace(principal.organisationId, workspace.id, request.body),
      );
    },
  );
}
