import { z } from 'zod';
import type { ZodApp } from '../../http/zod-app.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import { listBody } from '../shared/pagination.js';
import {
  configObject,
  configParams,
  configSummary,
  configVersionObject,
  configVersionParams,
  createConfigBody,
  listConfigsQuery,
  updateConfigBody,
} from './schemas.js';
import type { ConfigService } from './service.js';

const TAG = ['Configs'];
const auth = (verb: string) => ({ scope: `configs.${verb}`, keyTypes: BOTH_KEY_TYPES });
// Guardrail webhooks in a config carry credentials in their headers, under any name.
const audit = (action: string) => ({ resourceType: 'config', action, secretFields: ['headers'] });
const INVALID_CONFIG =
  'An invalid config answers 400 AB01_INVALID_CONFIG: `param` is the JSON path of the first problem and the message lists every problem.';

export function registerConfigRoutes(app: ZodApp, service: ConfigService): void {
  app.get(
    '/v1/configs',
    {
      schema: {
        tags: TAG,
        summary: 'List configs',
        querystring: listConfigsQuery,
        response: {
          200: z.object({
            object: z.literal('list'),
            total: z.number(),
            data: z.array(configSummary),
            success: z.literal(true).describe("The reference's wrapper flag, beside svcgw's list fields."),
          }),
        },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return { ...listBody(data, total), success: true as const };
    },
  );

  app.post(
    '/v1/configs',
    {
      schema: {
        tags: TAG,
        summary: 'Create a config',
        description: INVALID_CONFIG,
        body: createConfigBody,
        response: {
          200: z.object({
            id: z.uuid(),
            slug: z.string(),
            version_id: z.uuid(),
            object: z.literal('config'),
            success: z.literal(true),
            data: z.object({ id: z.uuid(), version_id: z.uuid() }).describe("The reference's wrapper."),
          }),
        },
      },
      config: { auth: auth('create'), audit: audit('create') },
    },
    async (request) => {
      const { row, version } = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {
        id: row.id,
        slug: row.slug,
        version_id: version.id,
        object: 'config' as const,
        success: true as const,
        data: { id: row.id, version_id: version.id },
      };
    },
  );

  app.get(
    '/v1/configs/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Get a config (its latest version)',
        params: configParams,
        response: {
          200: configObject.extend({
            success: z.literal(true),
            data: configObject.describe("The reference's wrapper: the same object again."),
          }),
        },
      },
      config: { auth: auth('read') },
    },
    async (request) => {
      const config = await service.get(request.principal!, request.params.slug);
      return { ...config, success: true as const, data: config };
    },
  );

  app.put(
    '/v1/configs/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Update a config',
        description: `A changed config is saved as a new version, which becomes the one in use. ${INVALID_CONFIG}`,
        params: configParams,
        body: updateConfigBody,
        response: {
          200: z.object({
            id: z.uuid(),
            slug: z.string(),
            version_id: z.uuid(),
            success: z.literal(true),
            data: z.object({ version_id: z.uuid() }).describe("The reference's wrapper."),
          }),
        },
      },
      config: { auth: auth('update'), audit: audit('update') },
    },
    async (request) => {
      const { row, versionId } = await service.update(request.principal!, request.params.slug, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {
        id: row.id,
        slug: row.slug,
        version_id: versionId,
        success: true as const,
        data: { version_id: versionId },
      };
    },
  );

  app.delete(
    '/v1/configs/:slug',
    {
      schema: {
        tags: TAG,
        summary: 'Archive a config',
        description: 'Deleting archives the config: it frees its slug and stays readable with its versions.',
        params: configParams,
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

  app.get(
    '/v1/configs/:slug/versions',
    {
      schema: {
        tags: TAG,
        summary: 'List the versions of a config (newest first)',
        params: configParams,
        response: {
          200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(configVersionObject) }),
        },
      },
      config: { auth: auth('read') },
    },
    async (request) => {
      const data = await service.listVersions(request.principal!, request.params.slug);
      return listBody(data, data.length);
    },
  );

  app.get(
    '/v1/configs/:slug/versions/:version',
    {
      schema: {
        tags: TAG,
        summary: 'Get one version of a config',
        params: configVersionParams,
        response: { 200: configVersionObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.getVersion(request.principal!, request.params.slug, request.params.version),
  );
}
