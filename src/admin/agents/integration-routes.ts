import { z } from 'zod';
import type { CardRead } from '../../agents/card-reader.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { registerSwitchRoutes, registerWorkspaceAccessRoutes } from '../tool-servers/setting-routes.js';
import { listBody } from '../shared/pagination.js';
import type { AgentIntegrationAccess } from './integration-access.js';
import type { AgentIntegrationService } from './integration-service.js';
import { createPrefetch } from './prefetch.js';
import {
  createIntegrationBody,
  idParams,
  integrationObject,
  listIntegrationsQuery,
  metadataObject,
  pageQuery,
  skillObject,
  skillList,
  skillsBody,
  successObject,
  syncStatus,
  updateIntegrationBody,
  workspaceAccessBody,
  workspaceAccessObject,
} from './schemas.js';
import type { CardReader } from './sync.js';

const TAG = ['Agent integrations'];
const auth = (verb: string) => ({ scope: `agent_integrations.${verb}`, keyTypes: BOTH_KEY_TYPES });
// Custom header values are credentials under any name; bearer_token is caught by its name.
const audit = (action: string) => ({ resourceType: 'agent_integration', action, secretFields: ['custom_headers'] });
const CREDENTIALS =
  'Credentials (`configurations.custom_headers` values, `configurations.bearer_token`) are encrypted at rest and answered as [REDACTED]; sending [REDACTED] back keeps the stored value.';

export function registerAgentIntegrationRoutes(
  app: ZodApp,
  deps: { service: AgentIntegrationService; access: AgentIntegrationAccess; readCard: CardReader },
): void {
  const { service, access, readCard } = deps;
  const reads = createPrefetch<CardRead>();

  app.get(
    '/v1/agent-integrations',
    {
      schema: {
        tags: TAG,
        summary: 'List agent integrations',
        description:
          "A workspace key, or `workspace_id`, lists what the workspace may use: its own integrations and the organisation's enabled for it.",
        querystring: listIntegrationsQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(integrationObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/agent-integrations',
    {
      schema: {
        tags: TAG,
        summary: 'Create an agent integration (a remote A2A agent)',
        description: `Reads the agent's card at once and keeps its skills; the answer says whether that worked (sync_status), and the integration is made either way. Without \`workspace_id\` an admin key makes an organisation integration, usable in the workspaces enabled for it. ${CREDENTIALS}`,
        body: createIntegrationBody,
        response: {
          200: z.object({
            id: z.uuid(),
            slug: z.string(),
            sync_status: syncStatus,
            sync_error: z.string().nullable(),
            object: z.literal('agent_integration'),
          }),
        },
      },
      config: { auth: auth('create'), audit: audit('create') },
      preValidation: async (request) => {
        const body = createIntegrationBody.safeParse(request.body);
        if (body.success) reads.keep(request, await readCard(service.createTarget(body.data)));
      },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body, reads.take(request) ?? null);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {
        id: row.id,
        slug: row.slug,
        sync_status: row.sync_status,
        sync_error: row.sync_error,
        object: 'agent_integration' as const,
      };
    },
  );

  app.get(
    '/v1/agent-integrations/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Get an agent integration (id or slug)',
        params: idParams,
        response: { 200: integrationObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.id),
  );

  app.put(
    '/v1/agent-integrations/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Update an agent integration',
        description: `A new url, rpc_url or credentials reads the card again. A new url forgets the old agent's skills and their switches. ${CREDENTIALS}`,
        params: idParams,
        body: updateIntegrationBody,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('update'), audit: audit('update') },
      preValidation: async (request) => {
        const body = updateIntegrationBody.safeParse(request.body);
        const id = (request.params as { id?: unknown }).id;
        if (!body.success || typeof id !== 'string') return;
        const target = await service.updateTarget(request.principal!, id, body.data);
        if (target) reads.keep(request, await readCard(target));
      },
    },
    async (request) => {
      const row = await service.update(
        request.principal!,
        request.params.id,
        request.body,
        reads.take(request) ?? null,
      );
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.delete(
    '/v1/agent-integrations/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Archive an agent integration',
        description:
          'Its servers stop answering at once (404 on the gateway); it stays readable, and its slug is free.',
        params: idParams,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      const row = await service.archive(request.principal!, request.params.id);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.post(
    '/v1/agent-integrations/:id/sync',
    {
      schema: {
        tags: TAG,
        summary: "Read the agent's card again: its skills, version and endpoint",
        description:
          'New skills start enabled, skills the card dropped are forgotten, the others keep their switches. A card that cannot be read leaves what the last one said in place, with sync_status error.',
        params: idParams,
        response: { 200: metadataObject },
      },
      config: { auth: auth('update'), audit: audit('sync') },
      preValidation: async (request) => {
        const id = (request.params as { id?: unknown }).id;
        if (typeof id === 'string')
          reads.keep(request, await readCard(await service.syncTarget(request.principal!, id)));
      },
    },
    async (request) => {
      const read = reads.take(request);
      if (!read) throw new Error('the card read of a sync is made before its handler');
      const { row, metadata } = await service.sync(request.principal!, request.params.id, read);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return metadata;
    },
  );

  app.get(
    '/v1/agent-integrations/:id/metadata',
    {
      schema: {
        tags: TAG,
        summary: "What the agent's card said at the last sync",
        description:
          'Name, description, version, A2A protocol version, JSON-RPC endpoint, capability flags and sync status.',
        params: idParams,
        response: { 200: metadataObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.metadata(request.principal!, request.params.id),
  );

  const setting = { base: '/v1/agent-integrations', scope: 'agent_integrations', params: idParams, audit };
  registerSwitchRoutes(app, {
    ...setting,
    items: 'skills',
    read: {
      tags: TAG,
      summary: "The agent's skills (from its card) and whether each is enabled",
      querystring: pageQuery,
      response: skillList(skillObject),
    },
    change: {
      tags: TAG,
      summary: 'Enable or disable skills for every server of the integration',
      description:
        'A disabled skill is left out of the card the gateway serves, and a message that names it (metadata skill_id) is refused; see docs/agents.md.',
      body: skillsBody,
      response: successObject,
    },
    get: async (principal, id, query) => {
      const { total, data, counts } = await access.skills(principal, id, query);
      return { ...listBody(data, total), counts };
    },
    set: (principal, id, body) => access.setSkills(principal, id, body),
  });

  registerWorkspaceAccessRoutes(app, {
    ...setting,
    read: {
      tags: TAG,
      summary: 'Which workspaces may use an organisation agent integration',
      response: workspaceAccessObject,
    },
    change: {
      tags: TAG,
      summary: 'Enable or disable an organisation agent integration in workspaces',
      description:
        'A workspace may use the integration when its own switch is on, or when it has none and global_workspace_access is on. Servers of a workspace that loses access stop answering (403).',
      body: workspaceAccessBody,
      response: z.object({}),
    },
    get: (principal, id) => access.workspaceAccess(principal, id),
    set: (principal, id, body) => access.setWorkspaceAccess(principal, id, body),
  });
}
