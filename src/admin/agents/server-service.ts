import type { CardRead } from '../../agents/card-reader.js';
import { WELL_KNOWN_CARD_PATH } from '../../agents/protocol.js';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import type { AgentIntegrationRepository, AgentIntegrationRow } from '../../storage/repositories/agent-integrations.js';
import type {
  AgentServerListRow,
  AgentServerRepository,
  AgentServerRow,
} from '../../storage/repositories/agent-servers.js';
import type { UserRepository } from '../../storage/repositories/users.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';
import { findByIdOrSlug } from '../tool-servers/rows.js';
import { assertKnown } from '../tool-servers/switches.js';
import { userAllowed, userOverrides } from '../tool-servers/user-access.js';
import type { CardTarget } from './integration-service.js';
import { skillOf } from './integration-access.js';
import type { PageQuery, SkillsBody } from './schemas.js';
import type {
  CreateServerBody,
  ListServersQuery,
  ServerObject,
  ServerSkillObject,
  TestObject,
  UpdateServerBody,
  UserAccessBody,
  UserAccessObject,
} from './server-schemas.js';

/** The gateway's address as the caller reached it, for the URLs a server answers with. */
export type BaseUrl = string;

/**
 * The rules of agent servers: an agent integration's instance in one workspace, which the
 * gateway serves at /v1/agents/{slug}. A workspace key reaches its own workspace's servers
 * only (another workspace's are 404); its integration must be usable in the workspace.
 */
export function createAgentServerService(deps: {
  servers: AgentServerRepository;
  integrations: AgentIntegrationRepository;
  workspaces: WorkspaceRepository;
  users: UserRepository;
  clock: Clock;
  onChange: () => void;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const actor = (principal: Principal) => principal.userId ?? principal.keyId;

  async function find(principal: Principal, idOrSlug: string): Promise<AgentServerRow> {
    const row = await findByIdOrSlug(deps.servers, principal.organisationId, idOrSlug);
    if (!row || (principal.workspaceId !== null && row.workspace_id !== principal.workspaceId))
      throw notFound('Agent server', 'id');
    return row;
  }

  async function findActive(principal: Principal, idOrSlug: string): Promise<AgentServerRow> {
    const row = await find(principal, idOrSlug);
    if (row.status !== 'active') throw invalid('id', `Agent server ${row.slug} is archived.`);
    return row;
  }

  async function integrationOf(server: AgentServerRow): Promise<AgentIntegrationRow> {
    const row = await deps.integrations.findById(server.organisation_id, server.integration_id);
    if (!row) throw new Error(`agent server ${server.id} has no integration ${server.integration_id}`);
    return row;
  }

  async function listed(row: AgentServerRow, base: BaseUrl): Promise<ServerObject> {
    const full = await deps.servers.findListed(row.id);
    if (!full) throw new Error(`agent server ${row.id} vanished`);
    return toObject(full, base);
  }

  /** An integration the server's workspace may use, as the caller names it. */
  async function usableIntegration(principal: Principal, idOrSlug: string, workspaceId: string, workspaceSlug: string) {
    const row = await findByIdOrSlug(deps.integrations, principal.organisationId, idOrSlug);
    const usable = row && row.status === 'active' && (await deps.integrations.usableInWorkspace(row.id, workspaceId));
    if (usable) return row;
    // A workspace key only learns of integrations its workspace may use.
    const hidden =
      !row ||
      (principal.workspaceId !== null && (row.workspace_id === null || row.workspace_id !== principal.workspaceId));
    if (hidden)
      throw new AppError('NOT_FOUND', `Agent integration ${idOrSlug} not found.`, { param: 'agent_integration_id' });
    if (row.status !== 'active') throw invalid('agent_integration_id', `Agent integration ${row.slug} is archived.`);
    throw invalid(
      'agent_integration_id',
      `Agent integration ${row.slug} is not enabled for workspace ${workspaceSlug}; enable it there first (PUT /v1/agent-integrations/${row.slug}/workspaces).`,
    );
  }

  return {
    find,

    async list(principal: Principal, query: ListServersQuery, base: BaseUrl) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      let integrationId: string | undefined;
      if (query.agent_integration_id !== undefined) {
        const integration = await findByIdOrSlug(
          deps.integrations,
          principal.organisationId,
          query.agent_integration_id,
        );
        const hidden =
          !integration ||
          (principal.workspaceId !== null &&
            !(await deps.integrations.usableInWorkspace(integration.id, principal.workspaceId)));
        if (!integration || hidden)
          throw new AppError('NOT_FOUND', `Agent integration ${query.agent_integration_id} not found.`, {
            param: 'agent_integration_id',
          });
        integrationId = integration.id;
      }
      const { total, rows } = await deps.servers.list({
        organisationId: principal.organisationId,
        workspaceId: workspace?.id,
        integrationId,
        status: query.status,
        search: query.search,
        limit: query.page_size,
        offset: query.current_page * query.page_size,
      });
      return { total, data: rows.map((row) => toObject(row, base)) };
    },

    async create(principal: Principal, body: CreateServerBody, base: BaseUrl): Promise<ServerObject> {
      const workspace = await resolveWorkspace(deps.workspaces, principal, body.workspace_id, { required: true });
      if (!workspace) throw invalid('workspace_id', 'workspace_id is required when calling with an admin key.');
      if (workspace.status !== 'active') throw invalid('workspace_id', `Workspace ${workspace.slug} is archived.`);
      const integration = await usableIntegration(principal, body.agent_integration_id, workspace.id, workspace.slug);
      const slug = body.slug ?? slugify(body.name);
      const taken = await deps.servers.findBySlug(principal.organisationId, slug);
      if (taken?.status === 'active')
        throw new AppError('CONFLICT', `An active agent server with slug ${slug} already exists.`, { param: 'slug' });
      const stamp = now();
      const row: AgentServerRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace.id,
        integration_id: integration.id,
        slug,
        name: body.name,
        description: body.description ?? null,
        status: 'active',
        default_user_access: body.default_user_access,
        owner_id: actor(principal),
        updated_by: null,
        created_at: stamp,
        last_updated_at: stamp,
      };
      await insertUnique(() => deps.servers.insert(row), slugTaken(slug));
      deps.onChange();
      return listed(row, base);
    },

    async get(principal: Principal, idOrSlug: string, base: BaseUrl): Promise<ServerObject> {
      return listed(await find(principal, idOrSlug), base);
    },

    async update(principal: Principal, idOrSlug: string, body: UpdateServerBody): Promise<AgentServerRow> {
      const row = await findActive(principal, idOrSlug);
      await deps.servers.update(row.id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        updated_by: actor(principal),
        last_updated_at: now(),
      });
      deps.onChange();
      return row;
    },

    /** Archives: the gateway stops serving it at once, its slug is free, and it stays readable. */
    async archive(principal: Principal, idOrSlug: string): Promise<AgentServerRow> {
      const row = await find(principal, idOrSlug);
      if (row.status !== 'archived') {
        await deps.servers.update(row.id, { status: 'archived', updated_by: actor(principal), last_updated_at: now() });
        deps.onChange();
      }
      return row;
    },

    /** The server and its integration, for a test made before the request's transaction. */
    async testSubject(
      principal: Principal,
      idOrSlug: string,
    ): Promise<{ server: AgentServerRow; integration: AgentIntegrationRow }> {
      const server = await findActive(principal, idOrSlug);
      return { server, integration: await integrationOf(server) };
    },

    testResult(target: CardTarget, read: CardRead): TestObject {
      return read.ok
        ? {
            success: true,
            status_code: read.status,
            response_time_ms: read.elapsedMs,
            url: target.cardUrl,
            agent_name: read.card.name,
            skills_count: read.card.skills?.length ?? 0,
            error: null,
          }
        : {
            success: false,
            status_code: read.status,
            response_time_ms: read.elapsedMs,
            url: target.cardUrl,
            agent_name: null,
            skills_count: null,
            error: read.error,
          };
    },

    async skills(principal: Principal, idOrSlug: string, page: PageQuery) {
      const server = await find(principal, idOrSlug);
      const [skills, switches] = await Promise.all([
        deps.integrations.listSkills(server.integration_id),
        deps.servers.listSkillSwitches(server.id),
      ]);
      const own = new Map(switches.map((s) => [s.skill_id, s.enabled === 1]));
      const all: ServerSkillObject[] = skills.map((row) => {
        const skill = skillOf(row);
        return { ...skill, enabled: own.get(skill.id) ?? true, integration_enabled: skill.enabled };
      });
      const start = page.current_page * page.page_size;
      return {
        total: all.length,
        data: all.slice(start, start + page.page_size),
        counts: { total: all.length, enabled: all.filter((s) => s.enabled && s.integration_enabled).length },
      };
    },

    async setSkills(principal: Principal, idOrSlug: string, body: SkillsBody): Promise<AgentServerRow> {
      const server = await findActive(principal, idOrSlug);
      const known = new Set((await deps.integrations.listSkills(server.integration_id)).map((s) => s.skill_id));
      assertKnown(
        body.skills,
        known,
        (skill) => skill.id,
        (skill, i) => invalid(`skills[${i}].id`, `The agent's card has no skill ${skill.id} (as last synced).`),
      );
      await deps.servers.setSkills(
        server.id,
        body.skills.map((s) => ({ skillId: s.id, enabled: s.enabled })),
      );
      await deps.servers.update(server.id, { updated_by: actor(principal), last_updated_at: now() });
      deps.onChange();
      return server;
    },

    async userAccess(principal: Principal, idOrSlug: string, page: PageQuery): Promise<UserAccessObject> {
      const server = await find(principal, idOrSlug);
      const { total, rows } = await deps.servers.listUserAccess(server.id, server.workspace_id, {
        limit: page.page_size,
        offset: page.current_page * page.page_size,
      });
      return {
        object: 'list',
        total,
        data: rows.map((row) => ({
          user_id: row.user_id,
          email: row.email,
          first_name: row.first_name,
          last_name: row.last_name,
          enabled: userAllowed(row.enabled, server.default_user_access),
          has_override: row.enabled !== null,
        })),
        default_user_access: server.default_user_access,
      };
    },

    async setUserAccess(principal: Principal, idOrSlug: string, body: UserAccessBody): Promise<AgentServerRow> {
      const server = await findActive(principal, idOrSlug);
      for (const [i, entry] of body.user_access.entries()) {
        if (!(await deps.users.findById(principal.organisationId, entry.user_id)))
          throw new AppError('NOT_FOUND', `User ${entry.user_id} not found.`, { param: `user_access[${i}].user_id` });
      }
      await deps.servers.setUserAccess(server.id, userOverrides(body.user_access), {
        ...(body.default_user_access ? { default_user_access: body.default_user_access } : {}),
        updated_by: actor(principal),
        last_updated_at: now(),
      });
      deps.onChange();
      return server;
    },
  };
}

export type AgentServerService = ReturnType<typeof createAgentServerService>;

/** The gateway URL of a server: JSON-RPC calls go there, its card is under it. */
export const gatewayUrlOf = (base: BaseUrl, slug: string) => `${base}/v1/agents/${slug}`;

function toObject(row: AgentServerListRow, base: BaseUrl): ServerObject {
  const url = gatewayUrlOf(base, row.slug);
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    status: row.status,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    workspace_slug: row.workspace_slug,
    workspace_name: row.workspace_name,
    agent_integration_id: row.integration_id,
    agent_integration_slug: row.integration_slug,
    agent_integration_name: row.integration_name,
    agent_integration_url: row.integration_url,
    auth_type: row.integration_auth_type as ServerObject['auth_type'],
    default_user_access: row.default_user_access,
    url,
    card_url: `${url}/${WELL_KNOWN_CARD_PATH}`,
    owner_id: row.owner_id,
    updated_by: row.updated_by,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'agent_server',
  };
}
