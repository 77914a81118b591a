import { z } from 'zod';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  aliasObject,
  aliasParams,
  aliasScopeQuery,
  createAliasBody,
  listAliasesQuery,
  updateAliasBody,
} from './schemas.js';
import type { ModelAliasService } from './service.js';

const TAG = ['Model aliases'];
const auth = (verb: string) => ({ scope: `model_aliases.${verb}`, keyTypes: BOTH_KEY_TYPES });
const audit = (action: string) => ({ resourceType: 'model_alias', action });
const ABOUT =
  'An alias is a plain model name (`default-chat`) that the gateway routes to `@slug/model` or to a config. A workspace alias shadows an organisation-wide one of the same name.';

export function registerModelAliasRoutes(app: ZodApp, service: ModelAliasService): void {
  app.get(
    '/v1/model-aliases',
    {
      schema: {
        tags: TAG,
        summary: 'List model aliases',
        description: `${ABOUT} A workspace key lists its workspace's aliases and the organisation's.`,
        querystring: listAliasesQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(aliasObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/model-aliases',
    {
      schema: {
        tags: TAG,
        summary: 'Create a model alias',
        description: ABOUT,
        body: createAliasBody,
        response: { 200: z.object({ id: z.uuid(), name: z.string(), object: z.literal('model-alias') }) },
      },
      config: { auth: auth('create'), audit: audit('create') },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, name: row.name, object: 'model-alias' as const };
    },
  );

  app.get(
    '/v1/model-aliases/:alias',
    {
      schema: {
        tags: TAG,
        summary: 'Get a model alias (by id, or by name)',
        params: aliasParams,
        querystring: aliasScopeQuery,
        response: { 200: aliasObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.alias, request.query.workspace_id),
  );

  app.put(
    '/v1/model-aliases/:alias',
    {
      schema: {
        tags: TAG,
        summary: 'Change what a model alias names',
        params: aliasParams,
        querystring: aliasScopeQuery,
        body: updateAliasBody,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('update'), audit: audit('update') },
    },
    async (request) => {
      const row = await service.update(
        request.principal!,
        request.params.alias,
        request.query.workspace_id,
        request.body,
      );
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.delete(
    '/v1/model-aliases/:alias',
    {
      schema: {
        tags: TAG,
        summary: 'Delete a model alias',
        description: 'The name stops resolving at once; the audit record keeps what it named.',
        params: aliasParams,
        querystring: aliasScopeQuery,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      const row = await service.remove(request.principal!, request.params.alias, request.query.workspace_id);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );
}
