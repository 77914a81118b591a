import { z } from 'zod';
import { SCOPES } from '../../auth/scopes.js';
import { BOTH_KEY_TYPES, ADMIN_ONLY, ORG_ADMINS, WORKSPACE_MANAGERS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  apiKeyObject,
  apiKeyParams,
  createApiKeyBody,
  createdApiKey,
  listApiKeysQuery,
  rotateApiKeyBody,
  rotatedApiKey,
  updateApiKeyBody,
} from './schemas.js';
import type { ApiKeyAdminService } from './service.js';

const TAG = ['API keys'];
const audit = (action: string) => ({ resourceType: 'api_key', action });
const byKind = (verb: string) => ({
  admin: `organisation_service_api_keys.${verb}`,
  workspace: `workspace_user_api_keys.${verb}`,
});

export function registerApiKeyRoutes(app: ZodApp, service: ApiKeyAdminService): void {
  app.get(
    '/v1/api-keys/scopes',
    {
      schema: {
        tags: TAG,
        summary: 'List every scope an API key can carry',
        response: {
          200: z.object({
            object: z.literal('list'),
            total: z.number(),
            data: z.array(z.object({ name: z.string(), description: z.string(), workspace: z.boolean() })),
          }),
        },
      },
      config: { auth: { scope: null, keyTypes: BOTH_KEY_TYPES } },
    },
    async () => listBody([...SCOPES], SCOPES.length),
  );

  app.post(
    '/v1/api-keys/organisation/service',
    {
      schema: {
        tags: TAG,
        summary: 'Create an admin (organisation) API key',
        description: 'The raw key is in this response only.',
        body: createApiKeyBody,
        response: { 200: createdApiKey },
      },
      config: {
        auth: { scope: 'organisation_service_api_keys.create', keyTypes: ADMIN_ONLY, roles: ORG_ADMINS },
        audit: audit('create'),
      },
    },
    async (request) => {
      const { row, raw } = await service.createAdminKey(request.principal!, request.body);
      request.auditResourceId = row.id;
      return { id: row.id, key: raw, object: 'api-key' as const };
    },
  );

  for (const [subType, type] of [
    ['user', 'workspace-user'],
    ['service', 'workspace-service'],
  ] as const) {
    app.post(
      `/v1/api-keys/workspace/${subType}`,
      {
        schema: {
          tags: TAG,
          summary: `Create a workspace ${subType} API key`,
          description: 'workspace_id takes an id or a slug. The raw key is in this response only.',
          body: createApiKeyBody,
          response: { 200: createdApiKey },
        },
        config: {
          auth: { scope: `workspace_${subType}_api_keys.create`, keyTypes: BOTH_KEY_TYPES, roles: WORKSPACE_MANAGERS },
          audit: audit('create'),
        },
      },
      async (request) => {
        const { row, raw } = await service.createWorkspaceKey(request.principal!, type, request.body);
        request.auditResourceId = row.id;
        request.auditWorkspaceId = row.workspace_id;
        return { id: row.id, key: raw, object: 'api-key' as const };
      },
    );
  }

  app.get(
    '/v1/api-keys',
    {
      schema: {
        tags: TAG,
        summary: 'List API keys (masked)',
        querystring: listApiKeysQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(apiKeyObject) }) },
      },
      config: { auth: { scope: byKind('list'), keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.get(
    '/v1/api-keys/:apiKeyId',
    {
      schema: { tags: TAG, summary: 'Get an API key (masked)', params: apiKeyParams, response: { 200: apiKeyObject } },
      config: { auth: { scope: byKind('read'), keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => service.get(request.principal!, request.params.apiKeyId),
  );

  app.put(
    '/v1/api-keys/:apiKeyId',
    {
      schema: {
        tags: TAG,
        summary: 'Update an API key (name, scopes, expiry, rate and usage limits, rotation policy)',
        params: apiKeyParams,
        body: updateApiKeyBody,
        response: { 200: z.object({}) },
      },
      config: { auth: { scope: byKind('update'), keyTypes: BOTH_KEY_TYPES }, audit: audit('update') },
    },
    async (request) => {
      request.auditResourceId = request.params.apiKeyId;
      const row = await service.update(request.principal!, request.params.apiKeyId, request.body);
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.post(
    '/v1/api-keys/:apiKeyId/rotate',
    {
      schema: {
        tags: TAG,
        summary: 'Rotate an API key',
        description:
          'Issues a new secret for the key (same id, scopes and limits), shown in this response only. The previous secret stays valid until key_transition_expires_at; rotating again during a transition keeps only the latest previous secret. After a scheduled rotation this issues the new secret and leaves that rotation’s transition as it is.',
        params: apiKeyParams,
        body: rotateApiKeyBody.nullish(),
        response: { 200: rotatedApiKey },
      },
      // The audit record holds the request body (no secret in it), never the response.
      config: { auth: { scope: byKind('update'), keyTypes: BOTH_KEY_TYPES }, audit: audit('rotate') },
    },
    async (request) => {
      request.auditResourceId = request.params.apiKeyId;
      const { row, raw, transitionExpiresAt } = await service.rotate(
        request.principal!,
        request.params.apiKeyId,
        request.body,
      );
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, key: raw, key_transition_expires_at: transitionExpiresAt, object: 'api-key' as const };
    },
  );

  app.delete(
    '/v1/api-keys/:apiKeyId',
    {
      schema: {
        tags: TAG,
        summary: 'Revoke an API key',
        description: 'The key stops working at once.',
        params: apiKeyParams,
        response: { 200: z.object({}) },
      },
      config: { auth: { scope: byKind('delete'), keyTypes: BOTH_KEY_TYPES }, audit: audit('delete') },
    },
    async (request) => {
      request.auditResourceId = request.params.apiKeyId;
      const row = await service.revoke(request.principal!, request.params.apiKeyId);
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );
}
