import { z } from 'zod';
import { ADMIN_ONLY, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  createIntegrationBody,
  integrationDetailObject,
  integrationObject,
  integrationParams,
  listIntegrationsQuery,
  updateIntegrationBody,
} from './schemas.js';
import type { IntegrationService } from './service.js';

const TAG = ['Integrations'];
const auth = (verb: string) => ({ scope: `integrations.${verb}`, keyTypes: ADMIN_ONLY, roles: ORG_ADMINS });
// `key` is the provider key; custom headers often carry credentials too.
const audit = (action: string) => ({ resourceType: 'integration', action, secretFields: ['key', 'custom_headers'] });

export function registerIntegrationRoutes(app: ZodApp, service: IntegrationService): void {
  app.get(
    '/v1/integrations',
    {
      schema: {
        tags: TAG,
        summary: 'List integrations',
        description: 'tags=key:value,key2:value2 keeps integrations that carry all the pairs.',
        querystring: listIntegrationsQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(integrationObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/integrations',
    {
      schema: {
        tags: TAG,
        summary: 'Create an integration',
        description:
          'Stores an organisation credential for one provider type, and (unless create_default_provider is false) a provider that uses it in a workspace, in one transaction.',
        body: createIntegrationBody,
        response: { 200: z.object({ id: z.uuid(), slug: z.string(), object: z.literal('integration') }) },
      },
      config: { auth: auth('create'), audit: audit('create') },
    },
    async (request) => {
      const { integration } = await service.create(request.principal!, request.body);
      request.auditResourceId = integration.id;
      return { id: integration.id, slug: integration.slug, object: 'integration' as const };
    },
  );

  app.get(
    '/v1/integrations/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Get an integration (key masked)',
        params: integrationParams,
        response: { 200: integrationDetailObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.slug),
  );

  app.put(
    '/v1/integrations/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Update an integration',
        params: integrationParams,
        body: updateIntegrationBody,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('update'), audit: audit('update') },
    },
    async (request) => {
      const row = await service.update(request.principal!, request.params.slug, request.body);
      request.auditResourceId = row.id;
      return {};
    },
  );

  app.delete(
    '/v1/integrations/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Archive an integration',
        description:
          'Deleting archives the integration and its providers: they stop resolving at once and stay readable.',
        params: integrationParams,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      const row = await service.archive(request.principal!, request.params.slug);
      request.auditResourceId = row.id;
      return {};
    },
  );
}
