import { z } from 'zod';
import { BOTH_KEY_TYPES, WORKSPACE_MANAGERS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  addMembersBody,
  listMembersQuery,
  memberObject,
  memberParams,
  membersParams,
  updateMemberBody,
} from './schemas.js';
import type { MemberService } from './service.js';

const TAG = ['Workspace members'];
const auth = (verb: string) => ({ scope: `workspace_users.${verb}`, keyTypes: BOTH_KEY_TYPES });
const change = (verb: string) => ({ ...auth(verb), roles: WORKSPACE_MANAGERS });
const audit = (action: string) => ({ resourceType: 'workspace_member', action });
const ROLE_RULE =
  'Organisation owners and admins manage every workspace; workspace managers and admins their own, never granting or touching a role above their own (403 ROLE_NOT_ALLOWED).';

export function registerMemberRoutes(app: ZodApp, service: MemberService): void {
  app.get(
    '/v1/workspaces/:workspaceId/members',
    {
      schema: {
        tags: TAG,
        summary: 'List the members of a workspace',
        description: 'workspaceId takes an id or a slug.',
        params: membersParams,
        querystring: listMembersQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(memberObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.params.workspaceId, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/workspaces/:workspaceId/members',
    {
      schema: {
        tags: TAG,
        summary: 'Add users of the organisation to a workspace',
        description: ROLE_RULE,
        params: membersParams,
        body: addMembersBody,
        response: { 200: z.object({}) },
      },
      config: { auth: change('create'), audit: audit('create') },
    },
    async (request) => {
      const workspace = await service.add(request.principal!, request.params.workspaceId, request.body);
      request.auditWorkspaceId = workspace.id;
      return {};
    },
  );

  app.get(
    '/v1/workspaces/:workspaceId/members/:userId',
    {
      schema: {
        tags: TAG,
        summary: 'Get a member of a workspace',
        params: memberParams,
        response: { 200: memberObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.workspaceId, request.params.userId),
  );

  app.put(
    '/v1/workspaces/:workspaceId/members/:userId',
    {
      schema: {
        tags: TAG,
        summary: "Change a member's role in the workspace",
        description: ROLE_RULE,
        params: memberParams,
        body: updateMemberBody,
        response: { 200: z.object({}) },
      },
      config: { auth: change('update'), audit: audit('update') },
    },
    async (request) => {
      request.auditResourceId = request.params.userId;
      const workspace = await service.update(
        request.principal!,
        request.params.workspaceId,
        request.params.userId,
        request.body,
      );
      request.auditWorkspaceId = workspace.id;
      return {};
    },
  );

  app.delete(
    '/v1/workspaces/:workspaceId/members/:userId',
    {
      schema: {
        tags: TAG,
        summary: 'Remove a member from the workspace',
        description: `Their own (workspace-user) keys in the workspace are revoked with the membership. ${ROLE_RULE}`,
        params: memberParams,
        response: { 200: z.object({}) },
      },
      config: { auth: change('delete'), audit: audit('delete') },
    },
    async (request) => {
      request.auditResourceId = request.params.userId;
      const workspace = await service.remove(request.principal!, request.params.workspaceId, request.params.userId);
      request.auditWorkspaceId = workspace.id;
      return {};
    },
  );
}
