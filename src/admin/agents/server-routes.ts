import { z } from 'zod';
import type { CardRead } from '../../agents/card-reader.js';
import { publicBaseUrl } from '../../agents/public-url.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { registerSwitchRoutes, registerUserAccessRoutes } from '../tool-servers/setting-routes.js';
import { listBody } from '../shared/pagination.js';
import type { AgentIntegrationRow } from '../../storage/repositories/agent-integrations.js';
import type { AgentIntegrationService, CardTarget } from './integration-service.js';
import { createPrefetch } from './prefetch.js';
import { idParams, pageQuery, skillList, skillsBody, successObject } from './schemas.js';
import {
  createServerBody,
  listServersQuery,
  serverObject,
  serverSkillObject,
  testObject,
  updateServerBody,
  userAccessBody,
  userAccessObject,
} from './server-schemas.js';
import type { AgentServerService } from './server-service.js';
import type { CardReader } from './sync.js';

const TAG = ['Agent servers'];
const auth = (verb: string) => ({ scope: `agent_servers.${verb}`, keyTypes: BOTH_KEY_TYPES });
const audit = (action: string) => ({ resourceType: 'agent_server', action });

interface TestRun {
  target: CardTarget;
  read: CardRead;
  integration: AgentIntegrationRow;
}

export function registerAgentServerRoutes(
  app: ZodApp,
  deps: { servers: AgentServerService; integrations: AgentIntegrationService; readCard: CardReader },
): void {
  const { servers } = deps;
  const tests = createPrefetch<TestRun>();
  const base = (request: { headers: Parameters<typeof publicBaseUrl>[0]; protocol: string }) =>
    publicBaseUrl(request.headers, request.protocol);

  app.get(
    '/v1/agent-servers',
    {
      schema: {
        tags: TAG,
        summary: 'List agent servers',
        description:
          'A workspace key lists its own workspace’s servers; an admin key every workspace’s, or one with workspace_id.',
        querystring: listServersQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(serverObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await servers.list(request.principal!, request.query, base(request));
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/agent-servers',
    {
      schema: {
        tags: TAG,
        summary: 'Create an agent server (an agent integration in a workspace)',
        description:
          'The gateway serves it at once at `url` (/v1/agents/{slug}), with its card under it. The integration must be usable in the workspace.',
        body: createServerBody,
        response: { 200: serverObject },
      },
      config: { auth: auth('create'), audit: audit('create') },
    },
    async (request) => {
      const server = await servers.create(request.principal!, request.body, base(request));
      request.auditResourceId = server.id;
      request.auditWorkspaceId = server.workspace_id;
      return server;
    },
  );

  app.get(
    '/v1/agent-servers/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Get an agent server (id or slug)',
        params: idParams,
        response: { 200: serverObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => servers.get(request.principal!, request.params.id, base(request)),
  );

  app.put(
    '/v1/agent-servers/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Update an agent server (name, description; the slug is fixed)',
        params: idParams,
        body: updateServerBody,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('update'), audit: audit('update') },
    },
    async (request) => {
      const row = await servers.update(request.principal!, request.params.id, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.delete(
    '/v1/agent-servers/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Archive an agent server',
        description: 'The gateway stops serving it at once (404); it stays readable, and its slug is free.',
        params: idParams,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      const row = await servers.archive(request.principal!, request.params.id);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.post(
    '/v1/agent-servers/:id/test',
    {
      schema: {
        tags: TAG,
        summary: "Reach the server's agent: read its card with the integration's credentials",
        description:
          "Answers whether the card could be read, the agent's status code and response time. A card that is read also syncs the integration's skills.",
        params: idParams,
        response: { 200: testObject },
      },
      config: { auth: auth('update'), audit: audit('test') },
      preValidation: async (request) => {
        const id = (request.params as { id?: unknown }).id;
        if (typeof id !== 'string') return;
        const { integration } = await servers.testSubject(request.principal!, id);
        const target = deps.integrations.cardTargetOf(integration);
        tests.keep(request, { target, read: await deps.readCard(target), integration });
      },
    },
    async (request) => {
      const run = tests.take(request);
      if (!run) throw new Error('the card read of a test is made before its handler');
      const { server } = await servers.testSubject(request.principal!, request.params.id);
      await deps.integrations.saveTestRead(run.integration, run.read);
      request.auditResourceId = server.id;
      request.auditWorkspaceId = server.workspace_id;
      return servers.testResult(run.target, run.read);
    },
  );

  const setting = { base: '/v1/agent-servers', scope: 'agent_servers', params: idParams, audit };
  registerSwitchRoutes(app, {
    ...setting,
    items: 'skills',
    read: {
      tags: TAG,
      summary: "The agent's skills on this server",
      description:
        'A skill is served when it is enabled here (`enabled`) and on the integration (`integration_enabled`).',
      querystring: pageQuery,
      response: skillList(serverSkillObject),
    },
    change: {
      tags: TAG,
      summary: 'Enable or disable skills on this server',
      body: skillsBody,
      response: successObject,
    },
    get: async (principal, id, query) => {
      const { total, data, counts } = await servers.skills(principal, id, query);
      return { ...listBody(data, total), counts };
    },
    set: (principal, id, body) => servers.setSkills(principal, id, body),
  });

  registerUserAccessRoutes(app, {
    ...setting,
    read: {
      tags: TAG,
      summary: 'Who may call the server: the workspace’s members (and users with an override)',
      querystring: pageQuery,
      response: userAccessObject,
    },
    change: {
      tags: TAG,
      summary: 'Set the default user access and per-user overrides',
      description:
        'A person’s key (workspace user key, or a JWT naming a user) follows the user’s override, else the default; admin and workspace service keys are not subject to user access. `enabled: null` removes an override.',
      body: userAccessBody,
      response: successObject,
    },
    get: (principal, id, query) => servers.userAccess(principal, id, query),
    set: (principal, id, body) => servers.setUserAccess(principal, id, body),
  });
}
