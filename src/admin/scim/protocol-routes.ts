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
import type { Principal } from '../../auth/principal.js';
import { GROUP_FILTERS, USER_FILTERS } from './filter-attributes.js';
import type { ScimGroupService } from './groups-service.js';
import { listQueryOf, listResponse, project, projectionOf, type ListQuery } from './protocol/list-query.js';
import { matchesIfNoneMatch } from './protocol/preconditions.js';
import { locationOf } from './protocol/resource-meta.js';
import { ScimError } from './protocol/scim-errors.js';
import { SCIM_BASE_PATH, SCIM_CONTENT_TYPE } from './protocol/schema-urns.js';
import type { ScimUserService } from './users-service.js';

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

  registerResourceRoutes(app, {
    path: 'Users',
    auditAs: 'user',
    filters: USER_FILTERS,
    service: services.users,
    summaries: {
      list: 'List users (filter eq, startIndex, count)',
      get: 'Get a user',
      create: 'Provision a user',
      replace: 'Replace a user',
      patch: 'Change a user (PatchOp; active: false deactivates)',
      remove: 'Delete a user',
    },
  });
  registerResourceRoutes(app, {
    path: 'Groups',
    auditAs: 'group',
    filters: GROUP_FILTERS,
    service: services.groups,
    summaries: {
      list: 'List groups (filter eq, startIndex, count)',
      get: 'Get a group',
      create: 'Create a group',
      replace: 'Replace a group',
      patch: 'Change a group (PatchOp; members add, remove, replace)',
      remove: 'Delete a group',
    },
  });
}

interface ResourceView {
  resource: JsonObject;
  version: string;
}

/** What the Users and Groups routes ask of their service: the same operations on either resource. */
interface ScimResourceService<Attr extends string> {
  list(
    principal: Principal,
    query: ListQuery<Attr>,
    baseUrl: string,
  ): Promise<{ total: number; resources: JsonObject[] }>;
  get(principal: Principal, id: string, baseUrl: string): Promise<ResourceView>;
  create(principal: Principal, body: unknown, baseUrl: string): Promise<ResourceView & { row: { id: string } }>;
  replace(
    principal: Principal,
    id: string,
    body: unknown,
    ifMatch: string | undefined,
    baseUrl: string,
  ): Promise<ResourceView>;
  patch(
    principal: Principal,
    id: string,
    body: unknown,
    ifMatch: string | undefined,
    baseUrl: string,
  ): Promise<ResourceView>;
  remove(principal: Principal, id: string, ifMatch: string | undefined, baseUrl: string): Promise<void>;
}

/** List, read, create, replace, patch and delete of one SCIM resource type (RFC 7644 §3). */
function registerResourceRoutes<Attr extends string>(
  app: ZodApp,
  resource: {
    path: 'Users' | 'Groups';
    auditAs: 'user' | 'group';
    filters: Readonly<Record<string, Attr>>;
    service: ScimResourceService<Attr>;
    summaries: Record<'list' | 'get' | 'create' | 'replace' | 'patch' | 'remove', string>;
  },
): void {
  const { service, summaries } = resource;
  const collection = `${SCIM_BASE_PATH}/${resource.path}`;
  const one = `${collection}/:id`;
  app.get(collection, { schema: doc(summaries.list), config }, async (request, reply) => {
    const query = listQueryOf(request.query as Record<string, unknown>, resource.filters);
    const { total, resources } = await service.list(request.principal!, query, baseUrlOf(request));
    const shown = resources.map((found) => project(found, query.projection));
    return answer(reply, 200, listResponse(shown, total, query.startIndex));
  });
  app.get(one, { schema: doc(summaries.get, true), config }, async (request, reply) =>
    answerRead(request, reply, await service.get(request.principal!, idOf(request), baseUrlOf(request))),
  );
  app.post(
    collection,
    { schema: doc(summaries.create), config: audited(resource.auditAs, 'create') },
    async (request, reply) => {
      const view = await service.create(request.principal!, bodyOf(request), baseUrlOf(request));
      request.auditResourceId = view.row.id;
      reply.header('location', locationOf(baseUrlOf(request), resource.path, view.row.id));
      return answer(reply, 201, view.resource, view.version);
    },
  );
  for (const [method, change] of [
    ['put', 'replace'],
    ['patch', 'patch'],
  ] as const) {
    app[method](
      one,
      { schema: doc(summaries[change], true), config: audited(resource.auditAs, 'update') },
      async (request, reply) => {
        request.auditResourceId = idOf(request);
        const view = await service[change](
          request.principal!,
          idOf(request),
          bodyOf(request),
          ifMatchOf(request),
          baseUrlOf(request),
        );
        return answer(reply, 200, view.resource, view.version);
      },
    );
  }
  app.delete(
    one,
    { schema: doc(summaries.remove, true), config: audited(resource.auditAs, 'delete') },
    async (request, reply) => {
      request.auditResourceId = idOf(request);
      await service.remove(request.principal!, idOf(request), ifMatchOf(request), baseUrlOf(request));
      return reply.code(204).send();
    },
  );
}
