import { z } from 'zod';
import { ADMIN_ONLY, BOTH_KEY_TYPES, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  createWorkspaceBody,
  listWorkspacesQuery,
  updateWorkspaceBody,
  workspaceObject,
  workspaceParams,
  workspaceWithUsers,
} from './schemas.js';
import type { WorkspaceService } from './service.js';

const TAG = ['Workspaces'];

export function registerWorkspaceRoutes(app: ZodApp, service: WorkspaceService): void {
  app.post(
    '/v1/workspaces',
    {
      schema: {
        tags: TAG,
        summary: 'Create a workspace',
        body: createWorkspaceBody,
        response: { 200: workspaceObject },
      },
      config: {
        auth: { scope: 'workspaces.create', keyTypes: ADMIN_ONLY, roles: ORG_ADMINS },
        audit: { resourceType: 'workspace', action: 'create' },
      },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.id;
      return service.get(request.principal!, row.id);
    },
  );

  app.get(
    '/v1/workspaces',
    {
      schema: {
        tags: TAG,
        summary: 'List workspaces',
        description:
          '`status` is a comma-separated list of active, archived (default active); only organisation owners and admins list archived ones. `name` keeps workspaces whose name contains it (any case), `exact_name` the one with exactly that name. A workspace key lists its own workspace.',
        querystring: listWorkspacesQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(workspaceObject) }) },
      },
      config: { auth: { scope: { admin: 'workspaces.list', workspace: 'workspaces.read' }, keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.put(
    '/v1/workspaces/:workspaceId',
    {
      schema: {
        tags: TAG,
        summary: 'Update a workspace (name, description, defaults, usage and rate limits)',
        description: 'An archived workspace must be unarchived first.',
        params: workspaceParams,
        body: updateWorkspaceBody,
        response: { 200: z.object({}) },
      },
      config: {
        auth: { scope: 'workspaces.update', keyTypes: ADMIN_ONLY, roles: ORG_ADMINS },
        audit: { resourceType: 'workspace', action: 'update' },
      },
    },
    async (request) => {
      const row = await service.update(request.principal!, request.params.workspaceId, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.id;
      return {};
    },
  );

  app.get(
    '/v1/workspaces/:workspaceId',
    {
      schema: {
        tags: TAG,
        summary: 'Get a workspace by id or slug',
        description: 'Also answers its members (`users`, the first 500; the members route pages through them all).',
        params: workspaceParams,
        response: { 200: workspaceWithUsers },
      },
      config: { auth: { scope: 'workspaces.read', keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => service.getWithUsers(request.principal!, request.params.workspaceId),
  );

  app.delete(
    '/v1/workspaces/:workspaceId',
    {
      schema: {
        tags: TAG,
        summary: 'Archive a workspace',
        description:
          'Nothing is deleted or revoked: while archived, the keys of the workspace are refused (401 WORKSPACE_ARCHIVED) and it takes no changes. The default workspace cannot be archived. Archiving twice is harmless.',
        params: workspaceParams,
        response: { 200: z.object({}) },
      },
      config: {
        auth: { scope: 'workspaces.delete', keyTypes: ADMIN_ONLY, roles: ORG_ADMINS },
        audit: { resourceType: 'workspace', action: 'archive' },
      },
    },
    async (request) => {
      const row = await service.archive(request.principal!, request.params.workspaceId);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.id;
      return {};
    },
  );

  app.post(
    '/v1/workspaces/:workspaceId/unarchive',
    {
      schema: {
        tags: TAG,
        summary: 'Unarchive a workspace',
        description: 'Its keys work again at once.',
        params: workspaceParams,
        response: { 200: workspaceObject },
      },
      config: {
        auth: { scope: 'workspaces.update', keyTypes: ADMIN_ONLY, roles: ORG_ADMINS },
        audit: { resourceType: 'workspace', action: 'unarchive' },
      },
    },
    async (request) => {
      const row = await service.unarchive(request.principal!, request.params.workspaceId);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.id;
      return service.get(request.principal!, row.id);
    },
  );
}
