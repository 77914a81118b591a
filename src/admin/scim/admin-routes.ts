import { z } from 'zod';
import { ADMIN_ONLY, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  createMappingBody,
  createScimTokenBody,
  issuedScimToken,
  listMappingsQuery,
  listScimTokensQuery,
  mappingObject,
  mappingParams,
  scimTokenObject,
  scimTokenParams,
} from './admin-schemas.js';
import type { ScimMappingService } from './mappings-service.js';
import { toTokenObject, type ScimTokenService } from './tokens-service.js';

const TAG = ['SCIM'];
const feature = 'scim' as const;
const auth = (verb: string) => ({ scope: `scim.${verb}`, keyTypes: ADMIN_ONLY });
/** A SCIM token provisions and deprovisions people: only owners and admins make or end them, or map groups. */
const change = (verb: string) => ({ ...auth(verb), roles: ORG_ADMINS });

/** The administration side of SCIM: tokens for identity providers, and group → workspace mappings. */
export function registerScimAdminRoutes(
  app: ZodApp,
  services: { tokens: ScimTokenService; mappings: ScimMappingService },
): void {
  app.post(
    '/v1/scim/tokens',
    {
      schema: {
        tags: TAG,
        summary: 'Create a SCIM token for an identity provider',
        description:
          'The token is shown only in this response; give it to the identity provider with the base URL {server}/v1/scim/v2. Only its hash is stored.',
        body: createScimTokenBody,
        response: { 200: issuedScimToken },
      },
      config: { feature, auth: change('create'), audit: { resourceType: 'scim_token', action: 'create' } },
    },
    async (request) => {
      const { row, token } = await services.tokens.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      return { ...toTokenObject(row), token };
    },
  );

  app.get(
    '/v1/scim/tokens',
    {
      schema: {
        tags: TAG,
        summary: 'List SCIM tokens (never the tokens themselves)',
        querystring: listScimTokensQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(scimTokenObject) }) },
      },
      config: { feature, auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await services.tokens.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.delete(
    '/v1/scim/tokens/:tokenId',
    {
      schema: {
        tags: TAG,
        summary: 'Revoke a SCIM token',
        description: 'The token stops working at once, on every instance.',
        params: scimTokenParams,
        response: { 200: z.object({}) },
      },
      config: { feature, auth: change('delete'), audit: { resourceType: 'scim_token', action: 'delete' } },
    },
    async (request) => {
      request.auditResourceId = request.params.tokenId;
      await services.tokens.revoke(request.principal!, request.params.tokenId);
      return {};
    },
  );

  app.get(
    '/v1/scim/workspaces',
    {
      schema: {
        tags: TAG,
        summary: 'List SCIM group to workspace mappings',
        querystring: listMappingsQuery,
        response: { 200: z.object({ mappings: z.array(mappingObject), total_count: z.number() }) },
      },
      config: { feature, auth: auth('list') },
    },
    async (request) => services.mappings.list(request.principal!, request.query),
  );

  app.post(
    '/v1/scim/workspaces',
    {
      schema: {
        tags: TAG,
        summary: 'Map a SCIM group to a workspace and role',
        description:
          "Members of the group become members of the workspace with the role, at once and as the group changes; the highest role wins when several of a user's groups map to one workspace. Memberships made by hand are never changed.",
        body: createMappingBody,
        response: { 200: mappingObject },
      },
      config: { feature, auth: change('create'), audit: { resourceType: 'scim_workspace_mapping', action: 'create' } },
    },
    async (request) => {
      const mapping = await services.mappings.create(request.principal!, request.body);
      request.auditResourceId = mapping.id;
      request.auditWorkspaceId = mapping.workspace_id;
      return mapping;
    },
  );

  app.delete(
    '/v1/scim/workspaces/:scimWorkspaceGroupId',
    {
      schema: {
        tags: TAG,
        summary: 'Archive a SCIM group to workspace mapping',
        description: 'Memberships that only this mapping granted end at once.',
        params: mappingParams,
        response: { 200: z.object({ success: z.boolean() }) },
      },
      config: { feature, auth: change('delete'), audit: { resourceType: 'scim_workspace_mapping', action: 'delete' } },
    },
    async (request) => {
      request.auditResourceId = request.params.scimWorkspaceGroupId;
      const row = await services.mappings.remove(request.principal!, request.params.scimWorkspaceGroupId);
      request.auditWorkspaceId = row.workspace_id;
      return { success: true };
    },
  );
}
