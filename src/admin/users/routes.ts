import { z } from 'zod';
import { ADMIN_ONLY, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import { listUsersQuery, updateUserBody, userObject, userParams } from './schemas.js';
import type { UserService } from './service.js';

const TAG = ['Users'];
const auth = (verb: string) => ({ scope: `organisation_users.${verb}`, keyTypes: ADMIN_ONLY });
/** Changes need an organisation owner or admin; the service adds the rules about owners. */
const change = (verb: string) => ({ ...auth(verb), roles: ORG_ADMINS });
const audit = (action: string) => ({ resourceType: 'user', action });

export function registerUserRoutes(app: ZodApp, service: UserService): void {
  app.get(
    '/v1/users',
    {
      schema: {
        tags: TAG,
        summary: 'List the users of the organisation',
        description: 'Users join through invites (POST /v1/invites); there is no create route.',
        querystring: listUsersQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(userObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.get(
    '/v1/users/:userId',
    {
      schema: { tags: TAG, summary: 'Get a user', params: userParams, response: { 200: userObject } },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.userId),
  );

  app.put(
    '/v1/users/:userId',
    {
      schema: {
        tags: TAG,
        summary: "Change a user's organisation role (admin or member)",
        description:
          "Owners and admins only; the owner role is neither granted nor removed here, and admins cannot change owners. Takes effect on the user's keys at once.",
        params: userParams,
        body: updateUserBody,
        response: { 200: z.object({}) },
      },
      config: { auth: change('update'), audit: audit('update') },
    },
    async (request) => {
      request.auditResourceId = request.params.userId;
      await service.update(request.principal!, request.params.userId, request.body);
      return {};
    },
  );

  app.delete(
    '/v1/users/:userId',
    {
      schema: {
        tags: TAG,
        summary: 'Remove a user',
        description:
          'Removes their workspace memberships and revokes every API key they own, at once. The last owner cannot be removed.',
        params: userParams,
        response: { 200: z.object({}) },
      },
      config: { auth: change('delete'), audit: audit('delete') },
    },
    async (request) => {
      request.auditResourceId = request.params.userId;
      await service.remove(request.principal!, request.params.userId);
      return {};
    },
  );
}
