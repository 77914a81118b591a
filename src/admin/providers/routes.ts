import { z } from 'zod';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  createProviderBody,
  listProvidersQuery,
  providerObject,
  providerParams,
  providerQuery,
  providerRef,
  updateProviderBody,
} from './schemas.js';
import type { ProviderService } from './service.js';

const TAG = ['Providers'];
const auth = (verb: string) => ({ scope: `providers.${verb}`, keyTypes: BOTH_KEY_TYPES });
// Provider bodies carry no secret, but a key sent here by mistake must not reach the audit record.
const audit = (action: string) => ({ resourceType: 'provider', action, secretFields: ['key', 'custom_headers'] });

export function registerProviderRoutes(app: ZodApp, service: ProviderService): void {
  app.get(
    '/v1/providers',
    {
      schema: {
        tags: TAG,
        summary: 'List providers',
        description:
          'An admin key without workspace_id lists every workspace. tags=key:value,… keeps providers that carry all the pairs.',
        querystring: listProvidersQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(providerObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/providers',
    {
      schema: {
        tags: TAG,
        summary: 'Create a provider',
        description: 'A workspace handle on an integration, used in the gateway as x-service-provider: @<slug>.',
        body: createProviderBody,
        response: { 200: providerRef },
      },
      config: { auth: auth('create'), audit: audit('create') },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, slug: row.slug, object: 'provider' as const };
    },
  );

  app.get(
    '/v1/providers/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Get a provider',
        description:
          'By id, or by slug in the workspace named by workspace_id (a workspace key: its own; an admin key: the default workspace when left out).',
        params: providerParams,
        querystring: providerQuery,
        response: { 200: providerObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.slug, request.query.workspace_id),
  );

  app.put(
    '/v1/providers/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Update a provider',
        params: providerParams,
        querystring: providerQuery,
        body: updateProviderBody,
        response: { 200: providerRef },
      },
      config: { auth: auth('update'), audit: audit('update') },
    },
    async (request) => {
      const row = await service.update(
        request.principal!,
        request.params.slug,
        request.query.workspace_id,
        request.body,
      );
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, slug: row.slug, object: 'provider' as const };
    },
  );

  app.delete(
    '/v1/providers/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Archive a provider',
        description: 'Deleting archives: the provider stops resolving at once and stays readable.',
        params: providerParams,
        querystring: providerQuery,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      const row = await service.archive(request.principal!, request.params.slug, request.query.workspace_id);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );
}
