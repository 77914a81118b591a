import { z } from 'zod';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { registerSwitchRoutes, registerUserAccessRoutes } from '../tool-servers/setting-routes.js';
import {
  listCapabilitiesQuery,
  serverCapabilityList,
  successObject,
  updateCapabilitiesBody,
} from '../mcp-integrations/capability-schemas.js';
import {
  connectionList,
  connectionsQuery,
  createMcpServerBody,
  deleteConnectionsQuery,
  listMcpServersQuery,
  mcpServerList,
  mcpServerObject,
  mcpServerParams,
  serverMetadataObject,
  testResult,
  updateMcpServerBody,
  userAccessBody,
  userAccessList,
  userAccessQuery,
} from './schemas.js';
import type { McpServerService } from './service.js';

const TAG = ['MCP Servers'];
const auth = (verb: string) => ({ auth: { scope: `mcp_servers.${verb}`, keyTypes: BOTH_KEY_TYPES } });
const audit = (action: string) => ({ resourceType: 'mcp_server', action });

/** The address the caller used to reach this server: what the servers' `url` starts with. */
const baseOf = (request: { protocol: string; host: string }) => `${request.protocol}://${request.host}`;

export function registerMcpServerRoutes(app: ZodApp, service: McpServerService): void {
  app.get(
    '/v1/mcp-servers',
    {
      schema: {
        tags: TAG,
        summary: 'List MCP servers',
        description: 'A workspace key lists its own workspace’s servers.',
        querystring: listMcpServersQuery,
        response: { 200: mcpServerList },
      },
      config: auth('list'),
    },
    async (request) => ({
      object: 'list' as const,
      ...(await service.list(request.principal!, request.query, baseOf(request))),
    }),
  );

  app.post(
    '/v1/mcp-servers',
    {
      schema: {
        tags: TAG,
        summary: 'Create an MCP server (a workspace instance of an MCP integration)',
        description:
          'Clients reach it at `url` (`/v1/mcp/{slug}/mcp`) with a key holding `mcp.invoke`. The integration must be one the workspace may use.',
        body: createMcpServerBody,
        response: { 200: z.object({ id: z.uuid(), slug: z.string(), object: z.literal('mcp-server') }) },
      },
      config: { ...auth('create'), audit: audit('create') },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, slug: row.slug, object: 'mcp-server' as const };
    },
  );

  app.get(
    '/v1/mcp-servers/:id',
    {
      schema: { tags: TAG, summary: 'Get an MCP server', params: mcpServerParams, response: { 200: mcpServerObject } },
      config: auth('read'),
    },
    async (request) => service.get(request.principal!, request.params.id, baseOf(request)),
  );

  app.put(
    '/v1/mcp-servers/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Update an MCP server',
        params: mcpServerParams,
        body: updateMcpServerBody,
        response: { 200: z.object({}) },
      },
      config: { ...auth('update'), audit: audit('update') },
    },
    async (request) => {
      const row = await service.update(request.principal!, request.params.id, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.delete(
    '/v1/mcp-servers/:id',
    {
      schema: { tags: TAG, summary: 'Archive an MCP server', params: mcpServerParams, response: { 200: z.object({}) } },
      config: { ...auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      const row = await service.archive(request.principal!, request.params.id);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.post(
    '/v1/mcp-servers/:id/test',
    {
      schema: {
        tags: TAG,
        summary: "Test the connection to the server's upstream (and sync its capabilities and metadata)",
        description:
          'Connects afresh with the integration’s settings and runs the MCP handshake; on success the capability catalogue and metadata are refreshed from the server. Not an audited change: it alters no setting.',
        params: mcpServerParams,
        response: { 200: testResult },
      },
      config: auth('read'),
    },
    async (request) => service.test(request.principal!, request.params.id),
  );

  app.get(
    '/v1/mcp-servers/:id/metadata',
    {
      schema: {
        tags: TAG,
        summary: "The upstream server's metadata (name, version, title, icons, protocol version, sync status)",
        params: mcpServerParams,
        response: { 200: serverMetadataObject },
      },
      config: auth('read'),
    },
    async (request) => service.metadata(request.principal!, request.params.id),
  );

  const setting = { base: '/v1/mcp-servers', scope: 'mcp_servers', params: mcpServerParams, audit };
  registerSwitchRoutes(app, {
    ...setting,
    items: 'capabilities',
    read: {
      tags: ['MCP Servers > Capabilities'],
      summary: "The integration's capabilities as this server allows them",
      querystring: listCapabilitiesQuery,
      response: serverCapabilityList,
    },
    change: {
      tags: ['MCP Servers > Capabilities'],
      summary: 'Enable or disable capabilities on this server',
      description:
        'A capability is usable when both the integration and the server enable it; a disabled one is left out of lists and refused.',
      body: updateCapabilitiesBody,
      response: successObject,
    },
    get: (principal, id, query) => service.capabilities(principal, id, query),
    set: (principal, id, body) => service.setCapabilities(principal, id, body),
  });

  registerUserAccessRoutes(app, {
    ...setting,
    read: {
      tags: ['MCP Servers > User Access'],
      summary: 'Which users may call the server',
      description: "Every user who can reach the server's workspace, with the override and connection of each.",
      querystring: userAccessQuery,
      response: userAccessList,
    },
    change: {
      tags: ['MCP Servers > User Access'],
      summary: 'Set the default user access and per-user overrides',
      body: userAccessBody,
      response: successObject,
    },
    get: (principal, id, query) => service.userAccess(principal, id, query),
    set: (principal, id, body) => service.setUserAccess(principal, id, body),
  });

  app.get(
    '/v1/mcp-servers/:id/connections',
    {
      schema: {
        tags: ['MCP Servers > Connections'],
        summary: 'Users who have connected to the server through the gateway',
        params: mcpServerParams,
        querystring: connectionsQuery,
        response: { 200: connectionList },
      },
      config: auth('read'),
    },
    async (request) => service.connections(request.principal!, request.params.id, request.query),
  );

  app.delete(
    '/v1/mcp-servers/:id/connections',
    {
      schema: {
        tags: ['MCP Servers > Connections'],
        summary: "Forget a user's connection (or every connection) to the server",
        params: mcpServerParams,
        querystring: deleteConnectionsQuery,
        response: { 200: successObject },
      },
      config: { ...auth('update'), audit: audit('delete_connections') },
    },
    async (request) => {
      const row = await service.deleteConnections(request.principal!, request.params.id, request.query);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { success: true };
    },
  );
}
