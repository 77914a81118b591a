import { z } from 'zod';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  createVirtualKeyBody,
  listVirtualKeysQuery,
  updateVirtualKeyBody,
  virtualKeyObject,
  virtualKeyParams,
} from './schemas.js';
import type { VirtualKeyService } from './service.js';

const TAG = ['Virtual keys'];
const auth = (verb: string) => ({ scope: `virtual_keys.${verb}`, keyTypes: BOTH_KEY_TYPES });
// `key` is the provider key; custom headers often carry credentials too.
const audit = (action: string) => ({ resourceType: 'virtual_key', action, secretFields: ['key', 'custom_headers'] });

export function registerVirtualKeyRoutes(app: ZodApp, service: VirtualKeyService): void {
  app.get(
    '/v1/virtual-keys',
    {
      schema: {
        tags: TAG,
        summary: 'List virtual keys (keys masked)',
        description: 'An admin key without workspace_id lists every workspace.',
        querystring: listVirtualKeysQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(virtualKeyObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/virtual-keys',
    {
      schema: {
        tags: TAG,
        summary: 'Create a virtual key',
        description:
          'The legacy credential: a provider type and key, used in the gateway as x-service-virtual-key: <slug>. Providers and integrations replace it.',
        body: createVirtualKeyBody,
        response: {
          200: z.object({
            id: z.uuid(),
            slug: z.string(),
            object: z.literal('virtual-key'),
            success: z.literal(true),
            data: z.object({ slug: z.string() }).describe("The reference's wrapper, beside svcgw's own fields."),
          }),
        },
      },
      config: { auth: auth('create'), audit: audit('create') },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {
        id: row.id,
        slug: row.slug,
        object: 'virtual-key' as const,
        success: true as const,
        data: { slug: row.slug },
      };
    },
  );

  app.get(
    '/v1/virtual-keys/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Get a virtual key (key masked)',
        params: virtualKeyParams,
        response: { 200: virtualKeyObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.slug),
  );

  app.put(
    '/v1/virtual-keys/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Update a virtual key',
        params: virtualKeyParams,
        body: updateVirtualKeyBody,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('update'), audit: audit('update') },
    },
    async (request) => {
      const row = await service.update(request.principal!, request.params.slug, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.delete(
    '/v1/virtual-keys/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Archive a virtual key',
        description: 'Deleting archives: the key stops resolving at once and stays readable.',
        params: virtualKeyParams,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      const row = await service.archive(request.principal!, request.params.slug);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );
}
