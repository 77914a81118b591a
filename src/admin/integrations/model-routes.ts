import { z } from 'zod';
import { ADMIN_ONLY, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { deleteModelsQuery, integrationModelsObject, putModelsBody } from './model-schemas.js';
import type { IntegrationModelService } from './model-service.js';
import { integrationParams } from './schemas.js';

const TAG = ['Integrations > Models'];
const auth = (verb: string) => ({ scope: `integrations.${verb}`, keyTypes: ADMIN_ONLY, roles: ORG_ADMINS });
const audit = (action: string) => ({ resourceType: 'integration', action });
const RULE =
  'A model is allowed when the list enables it, or when it is not listed and allow_all_models is true. The gateway refuses any other model with 403 MODEL_NOT_ALLOWED (param model) before calling the provider.';

/** `/v1/integrations/{slug}/models`: the models an integration, and every provider made from it, allows. */
export function registerIntegrationModelRoutes(app: ZodApp, service: IntegrationModelService): void {
  app.get(
    '/v1/integrations/:slug/models',
    {
      schema: {
        tags: TAG,
        summary: "List an integration's models",
        description: RULE,
        params: integrationParams,
        response: { 200: integrationModelsObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.list(request.principal!, request.params.slug),
  );

  app.put(
    '/v1/integrations/:slug/models',
    {
      schema: {
        tags: TAG,
        summary: "Add or change an integration's models, and allow_all_models",
        description: `Models are created or updated by slug; models not named stay as they are. ${RULE}`,
        params: integrationParams,
        body: putModelsBody,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('update'), audit: audit('update_models') },
    },
    async (request) => {
      const row = await service.put(request.principal!, request.params.slug, request.body);
      request.auditResourceId = row.id;
      return {};
    },
  );

  app.delete(
    '/v1/integrations/:slug/models',
    {
      schema: {
        tags: TAG,
        summary: "Remove models from an integration's list",
        description:
          'A removed model is allowed again only if allow_all_models is true. Every slug must be listed (404 otherwise).',
        params: integrationParams,
        querystring: deleteModelsQuery,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('update'), audit: audit('delete_models') },
    },
    async (request) => {
      const row = await service.remove(request.principal!, request.params.slug, request.query.slugs);
      request.auditResourceId = row.id;
      return {};
    },
  );
}
