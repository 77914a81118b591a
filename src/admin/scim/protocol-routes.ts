import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RouteAudit } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { REDACTED } from '../../lib/redact.js';
import { isPlainObject, read, textOf, type JsonObject } from './protocol/attributes.js';
import {
  allResourceTypes,
  allSchemas,
  isResourceTypeName,
  resourceType,
  schemaResource,
  serviceProviderConfig,
} from './protocol/discovery.js';
import { GROUP_FILTERS, type ScimGroupService } from './groups-service.js';
import { listQueryOf, listResponse, project, projectionOf } from './protocol/list-query.js';
import { matchesIfNoneMatch } from './protocol/preconditions.js';
import { locationOf } from './protocol/resource-meta.js';
import { ScimError } from './protocol/scim-errors.js';
import { SCIM_BASE_PATH, SCIM_CONTENT_TYPE } from './protocol/schema-urns.js';
import { USER_FILTERS, type ScimUserService } from './users-service.js';

const config = { auth: { scim: true as const }, feature: 'scim' as const };
/** The provider may send a password (Okta does on create); it is never stored, nor kept in the audit record. */
const audited = (resourceType: 'user' | 'group', action: string) => ({
  ...config,
  audit: { resourceType: `scim_${resourceType}`, action, secretFields: ['password'] } satisfies RouteAudit,
});
/**
 * The OpenAPI entry of a SCIM route. Bodies and answers are SCIM resources (RFC 7643), as the
 * discovery routes and docs/scim.md describe them; they are not restated as schemas here.
 */
const doc = (summary: string, withId = false) => ({
  tags: ['SCIM protocol'],
  summary,
  description:
    'For identity providers: Authorization: Bearer <SCIM token>, application/scim+json. Errors use the SCIM error schema (RFC 7644 §3.12). See docs/scim.md.',
  security: [{ 'SCIM-Token': [] }],
  ...(withId ? { params: z.object({ id: z.string() }) } : {}),
});

/** The body as the provider sent it; `request.body` keeps a copy without passwords, for the audit record. */
const sentBodies = new WeakMap<FastifyRequest, unknown>();
const bodyOf = (request: FastifyRequest): unknown => sentBodies.get(request) ?? request.body;

/** PATCH operations on `password` carry it as their value, under no secret-looking name. */
function withoutPasswords(body: unknown): unknown {
  if (!isPlainObject(body)) return body;
  const operations = read(body, 'Operations');
  if (!Array.isArray(operations)) return body;
  return {
    ...body,
    Operations: operations.map((operation: unknown) =>
      isPlainObject(operation) && textOf(read(operation, 'path')).toLowerCase().includes('password')
        ? { ...operation, value: REDACTED }
        : operation,
    ),
  };
}

const baseUrlOf = (request: FastifyRequest): string => `${request.protocol}://${request.host}`;
const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id;
const ifMatchOf = (request: FastifyRequest): string | undefined => {
  const value = request.headers['if-match'];
  return typeof value === 'string' ? value : undefined;
};

function answer(reply: FastifyReply, status: number, body: unknown, version?: string) {
  if (version) reply.header('etag', version);
  return reply.code(status).type(SCIM_CONTENT_TYPE).send(body);
}

/** A read of one resource: 304 when the client holds the current version (If-None-Match). */
function answerRead(request: FastifyRequest, reply: FastifyReply, view: { resource: JsonObject; version: string }) {
  const ifNoneMatch = request.headers['if-none-match'];
  if (typeof ifNoneMatch === 'string' && matchesIfNoneMatch(ifNoneMatch, view.version))
    return reply.code(304).header('etag', view.version).send();
  return answer(
    reply,
    200,
    project(view.resource, projectionOf(request.query as Record<string, unknown>)),
    view.version,
  );
}

/**
 * The SCIM 2.0 protocol routes (RFC 7644) under /v1/scim/v2, for identity providers. They take
 * a SCIM token only, answer in application/scim+json, and are registered in a scope of their own
 * whose error handler answers in the SCIM error schema (see server/plugins/scim-protocol.ts).
 */
export function registerScimProtocolRoutes(
  app: ZodApp,
  services: { users: ScimUserService; groups: ScimGroupService },
): void {
  app.addHook('preHandler', async (request) => {
    if (request.body === undefined) return;
    sentBodies.set(request, request.body);
    request.body = withoutPasswords(request.body);
  });

  app.get(
    `${SCIM_BASE_PATH}/ServiceProviderConfig`,
    { schema: doc('What this SCIM service provider supports'), config },
    async (request, reply) => answer(reply, 200, serviceProviderConfig(baseUrlOf(request))),
  );
  app.get(
    `${SCIM_BASE_PATH}/ResourceTypes`,
    { schema: doc('SCIM resource types (User, Group)'), config },
    async (request, reply) => {
      const types = allResourceTypes(baseUrlOf(request));
      return answer(reply, 200, listResponse(types, types.length, 1));
    },
  );
  app.get(
    `${SCIM_BASE_PATH}/ResourceTypes/:id`,
    { schema: doc('A SCIM resource type', true), config },
    async (request, reply) => {
      const id = idOf(request);
      if (!isResourceTypeName(id)) throw new ScimError('NOT_FOUND', `Resource type ${id} not found.`);
      return answer(reply, 200, resourceType(id, baseUrlOf(request)));
    },
  );
  app.get(
    `${SCIM_BASE_PATH}/Schemas`,
    { schema: doc('SCIM schemas, with the attributes svcgw keeps'), config },
    async (request, reply) => {
      const schemas = allSchemas(baseUrlOf(request));
      return answer(reply, 200, listResponse(schemas, schemas.length, 1));
    },
  );
  app.get(`${SCIM_BASE_PATH}/Schemas/:id`, { schema: doc('A SCIM schema', true), config }, async (request, reply) => {
    const found = schemaResource(idOf(request), baseUrlOf(request));
    if (!found) throw new ScimError('NOT_FOUND', `Schema ${idOf(request)} not found.`);
    return answer(reply, 200, found);
  });

  const users = services.users;
  app.get(
    `${SCIM_BASE_PATH}/Users`,
    { schema: doc('List users (filter eq, startIndex, count)'), config },
    async (request, reply) => {
      const query = listQueryOf(request.query as Record<string, unknown>, USER_FILTERS);
      const { total, resources } = await users.list(request.principal!, query, baseUrlOf(request));
      const shown = resources.map((resource) => project(resource, query.projection));
      return answer(reply, 200, listResponse(shown, total, query.startIndex));
    },
  );
  app.get(`${SCIM_BASE_PATH}/Users/:id`, { schema: doc('Get a user', true), config }, async (request, reply) =>
    answerRead(request, reply, await users.get(request.principal!, idOf(request), baseUrlOf(request))),
  );
  app.post(
    `${SCIM_BASE_PATH}/Users`,
    { schema: doc('Provision a user'), config: audited('user', 'create') },
    async (request, reply) => {
      const view = await users.create(request.principal!, bodyOf(request), baseUrlOf(request));
      request.auditResourceId = view.row.id;
      reply.header('location', locationOf(baseUrlOf(request), 'Users', view.row.id));
      return answer(reply, 201, view.resource, view.version);
    },
  );
  app.put(
    `${SCIM_BASE_PATH}/Users/:id`,
    { schema: doc('Replace a user', true), config: audited('user', 'update') },
    async (request, reply) => {
      request.auditResourceId = idOf(request);
      const view = await users.replace(
        request.principal!,
        idOf(request),
        bodyOf(request),
        ifMatchOf(request),
        baseUrlOf(request),
      );
      return answer(reply, 200, view.resource, view.version);
    },
  );
  app.patch(
    `${SCIM_BASE_PATH}/Users/:id`,
    { schema: doc('Change a user (PatchOp; active: false deactivates)', true), config: audited('user', 'update') },
    async (request, reply) => {
      request.auditResourceId = idOf(request);
      const view = await users.patch(
        request.principal!,
        idOf(request),
        bodyOf(request),
        ifMatchOf(request),
        baseUrlOf(request),
      );
      return answer(reply, 200, view.resource, view.version);
    },
  );
  app.delete(
    `${SCIM_BASE_PATH}/Users/:id`,
    { schema: doc('Delete a user', true), config: audited('user', 'delete') },
    async (request, reply) => {
      request.auditResourceId = idOf(request);
      await users.remove(request.principal!, idOf(request), ifMatchOf(request), baseUrlOf(request));
      return reply.code(204).send();
    },
  );

  const groups = services.groups;
  app.get(
    `${SCIM_BASE_PATH}/Groups`,
    { schema: doc('List groups (filter eq, startIndex, count)'), config },
    async (request, reply) => {
      const query = listQueryOf(request.query as Record<string, unknown>, GROUP_FILTERS);
      const { total, resources } = await groups.list(request.principal!, query, baseUrlOf(request));
      const shown = resources.map((resource) => project(resource, query.projection));
      return answer(reply, 200, listResponse(shown, total, query.startIndex));
    },
  );
  app.get(`${SCIM_BASE_PATH}/Groups/:id`, { schema: doc('Get a group', true), config }, async (request, reply) =>
    answerRead(request, reply, await groups.get(request.principal!, idOf(request), baseUrlOf(request))),
  );
  app.post(
    `${SCIM_BASE_PATH}/Groups`,
    { schema: doc('Create a group'), config: audited('group', 'create') },
    async (request, reply) => {
      const view = await groups.create(request.principal!, bodyOf(request), baseUrlOf(request));
      request.auditResourceId = view.row.id;
      reply.header('location', locationOf(baseUrlOf(request), 'Groups', view.row.id));
      return answer(reply, 201, view.resource, view.version);
    },
  );
  app.put(
    `${SCIM_BASE_PATH}/Groups/:id`,
    { schema: doc('Replace a group', true), config: audited('group', 'update') },
    async (request, reply) => {
      request.auditResourceId = idOf(request);
      const view = await groups.replace(
        request.principal!,
        idOf(request),
        bodyOf(request),
        ifMatchOf(request),
        baseUrlOf(request),
      );
      return answer(reply, 200, view.resource, view.version);
    },
  );
  app.patch(
    `${SCIM_BASE_PATH}/Groups/:id`,
    { schema: doc('Change a group (PatchOp; members add, remove, replace)', true), config: audited('group', 'update') },
    async (request, reply) => {
      request.auditResourceId = idOf(request);
      const view = await groups.patch(
        request.principal!,
        idOf(request),
        bodyOf(request),
        ifMatchOf(request),
        baseUrlOf(request),
      );
      return answer(reply, 200, view.resource, view.version);
    },
  );
  app.delete(
    `${SCIM_BASE_PATH}/Groups/:id`,
    { schema: doc('Delete a group', true), config: audited('group', 'delete') },
    async (request, reply) => {
      request.auditResourceId = idOf(request);
      await groups.remove(request.principal!, idOf(request), ifMatchOf(request), baseUrlOf(request));
      return reply.code(204).send();
    },
  );
}
