import { z } from 'zod';
import { ADMIN_ONLY, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { integrationParams } from './schemas.js';
import { putWorkspaceAccessBody, workspaceAccessObject } from './workspace-schemas.js';
import type { IntegrationWorkspaceService } from './workspace-service.js';

const TAG = ['Integrations > Workspaces'];
const auth = (verb: string) => ({ scope: `integrations.${verb}`, keyTypes: ADMIN_ONLY, roles: ORG_ADMINS });
const RULE =
  "A workspace's own setting wins; without one, global_workspace_access applies (every workspace until it is turned off). A workspace that may not use the integration can make no provider from it (403 INTEGRATION_NOT_ENABLED), and its existing providers stop resolving at once.";

/** `/v1/integrations/{slug}/workspaces`: which workspaces may use an integration. */
export function registerIntegrationWorkspaceRoutes(app: ZodApp, service: IntegrationWorkspaceService): void {
  app.get(
    '/v1/integrations/:slug/workspaces',
    {
      schema: {
        tags: TAG,
        summary: 'Which workspaces may use an integration',
        description: `Every active workspace of the organisation, with whether it may. ${RULE}`,
        params: integrationParams,
        response: { 200: workspaceAccessObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.slug),
  );

  app.put(
    '/v1/integrations/:slug/workspaces',
    {
      schema: {
        tags: TAG,
        summary: 'Enable or disable an integration for workspaces, or for all of them',
        description: `Workspaces not named keep their setting. Enabling a workspace also makes a provider from the integration there when it has none (create_default_provider, default true; its slug default_provider_slug, default the integration's). ${RULE}`,
        params: integrationParams,
        body: putWorkspaceAccessBody,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('update'), audit: { resourceType: 'integration', action: 'update_workspaces' } },
    },
    async (request) => {
      const row = await service.put(request.principal!, request.params.slug, request.body);
      request.auditResourceId = row.id;
      return {};
    },
  );
}
