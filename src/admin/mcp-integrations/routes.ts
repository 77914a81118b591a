import { z } from 'zod';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { registerSwitchRoutes, registerWorkspaceAccessRoutes } from '../tool-servers/setting-routes.js';
import { capabilityList, listCapabilitiesQuery, successObject, updateCapabilitiesBody } from './capability-schemas.js';
import {
  createMcpIntegrationBody,
  listMcpIntegrationsQuery,
  mcpIntegrationDetail,
  mcpIntegrationList,
  mcpIntegrationParams,
  metadataObject,
  updateMcpIntegrationBody,
  workspaceAccessBody,
  workspaceAccessObject,
  workspaceAccessQuery,
} from './schemas.js';
import type { McpIntegrationService } from './service.js';

const TAG = ['MCP Integrations'];
const auth = (verb: string) => ({ auth: { scope: `mcp_integrations.${verb}`, keyTypes: BOTH_KEY_TYPES } });
// Custom headers carry credentials under any name; client_secret is redacted by its name.
const audit = (action: string) => ({ resourceType: 'mcp_integration', action, secretFields: ['custom_headers'] });
const created = z.object({ id: z.uuid(), slug: z.string(), object: z.literal('mcp-integration') });

export function registerMcpIntegrationRoutes(app: ZodApp, service: McpIntegrationService): void {
  app.get(
    '/v1/mcp-integrations',
    {
      schema: {
        tags: TAG,
        summary: 'List MCP integrations',
        description:
          "A workspace key (or `workspace_id`) lists what the workspace owns or may use: its own integrations and the organisation's shared with it.",
        querystring: listMcpIntegrationsQuery,
        response: { 200: mcpIntegrationList },
      },
      config: auth('list'),
    },
    async (request) => ({ object: 'list' as const, ...(await service.list(request.principal!, request.query)) }),
  );

  app.post(
    '/v1/mcp-integrations',
    {
      schema: {
        tags: TAG,
        summary: 'Create an MCP integration',
        description:
          'An upstream MCP server: its URL, transport and authentication (secrets in `configurations` are encrypted at rest and never returned). Its capabilities and metadata are synced in the background right after.',
        body: createMcpIntegrationBody,
        response: { 200: created },
      },
      config: { ...auth('create'), audit: audit('create') },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, slug: row.slug, object: 'mcp-integration' as const };
    },
  );

  app.get(
    '/v1/mcp-integrations/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Get an MCP integration (secrets masked)',
        params: mcpIntegrationParams,
        response: { 200: mcpIntegrationDetail },
      },
      config: auth('read'),
    },
    async (request) => service.get(request.principal!, request.params.id),
  );

  app.put(
    '/v1/mcp-integrations/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Update an MCP integration',
        description: 'A change to the URL, transport or authentication replaces pooled connections and syncs again.',
        params: mcpIntegrationParams,
        body: updateMcpIntegrationBody,
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
    '/v1/mcp-integrations/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Archive an MCP integration and its MCP servers',
        params: mcpIntegrationParams,
        response: { 200: z.object({}) },
      },
      config: { ...auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      const row = await service.archive(request.principal!, request.params.id);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  const setting = { base: '/v1/mcp-integrations', scope: 'mcp_integrations', params: mcpIntegrationParams, audit };
  registerWorkspaceAccessRoutes(app, {
    ...setting,
    read: {
      tags: ['MCP Integrations > Workspaces'],
      summary: 'Which workspaces may use an MCP integration',
      querystring: workspaceAccessQuery,
      response: workspaceAccessObject,
    },
    change: {
      tags: ['MCP Integrations > Workspaces'],
      summary: 'Share an organisation MCP integration with workspaces',
      description:
        "A workspace's own switch wins over `global_workspace_access`; `override_existing_workspace_access` drops the switches first. Servers of a workspace that loses access stop answering (403).",
      body: workspaceAccessBody,
      response: z.object({}),
    },
    get: (principal, id) => service.workspaceAccess(principal, id),
    set: (principal, id, body) => service.setWorkspaceAccess(principal, id, body),
  });

  registerSwitchRoutes(app, {
    ...setting,
    items: 'capabilities',
    read: {
      tags: ['MCP Integrations > Capabilities'],
      summary: 'Tools, prompts, resources and resource templates synced from the server',
      querystring: listCapabilitiesQuery,
      response: capabilityList,
    },
    change: {
      tags: ['MCP Integrations > Capabilities'],
      summary: 'Enable or disable capabilities for every server of the integration',
      description:
        'A disabled capability is left out of lists and refused on every MCP server made from the integration. New capabilities found by a sync start enabled.',
      body: updateCapabilitiesBody,
      response: successObject,
    },
    get: (principal, id, query) => service.capabilities(principal, id, query),
    set: (principal, id, body) => service.setCapabilities(principal, id, body),
  });

  app.get(
    '/v1/mcp-integrations/:id/metadata',
    {
      schema: {
        tags: ['MCP Integrations > Metadata'],
        summary: "The server's name, version, protocol version and capability flags, and how the last sync went",
        params: mcpIntegrationParams,
        response: { 200: metadataObject },
      },
      config: auth('read'),
    },
    async (request) => service.metadata(request.principal!, request.params.id),
  );
}
