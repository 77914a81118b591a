import type { Principal } from '../../auth/principal.js';
import { guardrailUsesOf } from '../../guardrails/store/index.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import type { SyncOutcome } from '../../mcp/sync.js';
import type { McpIntegrationRepository, McpIntegrationRow } from '../../storage/repositories/mcp-integrations.js';
import type { McpServerListRow, McpServerRepository, McpServerRow } from '../../storage/repositories/mcp-servers.js';
import type { UserRepository } from '../../storage/repositories/users.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import type { GuardrailUseCheck } from '../guardrails/references.js';
import {
  countCapabilities,
  mcpPageWindow,
  toCapabilityItem,
  type ListCapabilitiesQuery,
  type UpdateCapabilitiesBody,
} from '../mcp-integrations/capability-schemas.js';
import { metadataOf } from '../mcp-integrations/service.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';
import { findByIdOrSlug } from '../tool-servers/rows.js';
import { assertKnown } from '../tool-servers/switches.js';
import { createMcpServerAccess } from './access.js';
import type {
  CreateMcpServerBody,
  ListMcpServersQuery,
  McpServerListItem,
  McpServerObject,
  UpdateMcpServerBody,
} from './schemas.js';

export interface McpServerServiceDeps {
  servers: McpServerRepository;
  integrations: McpIntegrationRepository;
  workspaces: WorkspaceRepository;
  users: UserRepository;
  clock: Clock;
  /** Connects to the integration's server, syncs its catalogue and metadata, and says how it went. */
  testConnection: (integrationId: string) => Promise<SyncOutcome>;
  checkGuardrails?: GuardrailUseCheck;
  onChange: () => void;
  /** Refuses a workspace that a secret reference mapped by the integration does not allow. */
  assertMappingsUsableIn?: (
    principal: Principal,
    storedMappings: string,
    workspaceId: string,
    param: string,
  ) => Promise<void>;
}

/** The path of a server's MCP endpoint on the gateway (docs/mcp.md). */
export const gatewayPath = (slug: string) => `/v1/mcp/${slug}/mcp`;

/**
 * The rules of MCP servers: each belongs to one workspace and is an instance of an integration
 * that workspace may use. Workspace keys reach their own workspace's servers only (another
 * workspace's are a 404); admin keys reach every server of the organisation.
 */
export function createMcpServerService(deps: McpServerServiceDeps) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const actor = (principal: Principal) => principal.userId ?? principal.keyId;

  async function find(principal: Principal, ref: string): Promise<McpServerRow> {
    const row = await findByIdOrSlug(deps.servers, principal.organisationId, ref);
    if (!row || (principal.workspaceId !== null && row.workspace_id !== principal.workspaceId))
      throw notFound(`MCP server ${ref}`, 'id');
    return row;
  }

  async function findActive(principal: Principal, ref: string): Promise<McpServerRow> {
    const row = await find(principal, ref);
    if (row.status !== 'active') throw invalid('id', `MCP server ${row.slug} is archived and cannot be changed.`);
    return row;
  }

  async function integrationOf(row: McpServerRow): Promise<McpIntegrationRow> {
    const integration = await deps.integrations.findById(row.organisation_id, row.integration_id);
    if (!integration) throw new Error(`MCP server ${row.id} names a missing integration ${row.integration_id}`);
    return integration;
  }

  async function targetWorkspace(principal: Principal, requested: string | undefined): Promise<WorkspaceRow> {
    const workspace =
      (await resolveWorkspace(deps.workspaces, principal, requested, { required: false })) ??
      (await deps.workspaces.findDefault(principal.organisationId));
    if (!workspace)
      throw invalid('workspace_id', 'The organisation has no default workspace; name one in workspace_id.');
    if (workspace.status !== 'active') throw invalid('workspace_id', `Workspace ${workspace.slug} is archived.`);
    return workspace;
  }

  /** The integration a new server is made from: one the workspace may use. */
  async function integrationFor(principal: Principal, ref: string, workspace: WorkspaceRow) {
    const row = await findByIdOrSlug(deps.integrations, principal.organisationId, ref);
    const usable = row ? await deps.integrations.usableIn(row.id, workspace.id) : false;
    // A workspace key sees only what its workspace may use; anything else does not exist for it.
    if (!row || (!usable && principal.workspaceId !== null))
      throw notFound(`MCP integration ${ref}`, 'mcp_integration_id');
    if (row.status !== 'active') throw invalid('mcp_integration_id', `MCP integration ${row.slug} is archived.`);
    if (!usable)
      throw invalid(
        'mcp_integration_id',
        `MCP integration ${row.slug} is not shared with workspace ${workspace.slug}; share it with PUT /v1/mcp-integrations/${row.id}/workspaces.`,
      );
    return row;
  }

  async function checkGuardrails(
    organisationId: string,
    workspaceId: string,
    fields: { input_guardrails?: unknown[] | null | undefined; output_guardrails?: unknown[] | null | undefined },
  ) {
    const node = {
      ...(fields.input_guardrails ? { input_guardrails: fields.input_guardrails } : {}),
      ...(fields.output_guardrails ? { output_guardrails: fields.output_guardrails } : {}),
    };
    const { before, after } = guardrailUsesOf(node);
    await deps.checkGuardrails?.({ organisationId, workspaceId, uses: [...before, ...after], field: '' });
  }

  /** Every present capability with the integration's flag and the server's own switch. */
  async function serverCapabilities(row: McpServerRow) {
    const [all, overrides] = await Promise.all([
      deps.integrations.allCapabilities(row.integration_id),
      deps.servers.capabilityOverrides(row.id),
    ]);
    const own = new Map(overrides.map((o) => [`${o.type}\u0000${o.name}`, o.enabled === 1]));
    return all.map((capability) => {
      const integrationEnabled = capability.enabled === 1;
      const serverEnabled = own.get(`${capability.type}\u0000${capability.name}`) ?? true;
      return { capability, integrationEnabled, enabled: integrationEnabled && serverEnabled };
    });
  }

  const access = createMcpServerAccess({
    servers: deps.servers,
    workspaces: deps.workspaces,
    users: deps.users,
    clock: deps.clock,
    find: (principal, ref, options) => (options?.active ? findActive(principal, ref) : find(principal, ref)),
    onChange: deps.onChange,
  });

  return {
    ...access,

    async create(principal: Principal, body: CreateMcpServerBody): Promise<McpServerRow> {
      const workspace = await targetWorkspace(principal, body.workspace_id);
      const integration = await integrationFor(principal, body.mcp_integration_id, workspace);
      await deps.assertMappingsUsableIn?.(principal, integration.secret_mappings, workspace.id, 'mcp_integration_id');
      const slug = body.slug ?? slugify(body.name);
      if ((await deps.servers.findBySlug(principal.organisationId, slug))?.status === 'active')
        throw new AppError('CONFLICT', `An MCP server with slug ${slug} already exists.`, { param: 'slug' });
      await checkGuardrails(principal.organisationId, workspace.id, body);
      const stamp = now();
      const row: McpServerRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace.id,
        integration_id: integration.id,
        slug,
        name: body.name,
        description: body.description ?? null,
        status: 'active',
        owner_id: actor(principal),
        default_user_access: body.default_user_access,
        input_guardrails: body.input_guardrails ? JSON.stringify(body.input_guardrails) : null,
        output_guardrails: body.output_guardrails ? JSON.stringify(body.output_guardrails) : null,
        created_at: stamp,
        last_updated_at: stamp,
      };
      await insertUnique(() => deps.servers.insert(row), slugTaken(slug));
      deps.onChange();
      return row;
    },

    async list(principal: Principal, query: ListMcpServersQuery, base: string) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const { total, rows } = await deps.servers.list({
        organisationId: principal.organisationId,
        workspaceId: workspace?.id,
        id: query.id,
        search: query.search,
        status: query.status,
        limit: query.page_size,
        offset: query.current_page * query.page_size,
      });
      return { total, data: rows.map((row) => toListItem(row, base)) };
    },

    async get(principal: Principal, ref: string, base: string): Promise<McpServerObject> {
      const row = await find(principal, ref);
      return toServerObject(row, await integrationOf(row), base);
    },

    async update(principal: Principal, ref: string, body: UpdateMcpServerBody): Promise<McpServerRow> {
      const row = await findActive(principal, ref);
      await checkGuardrails(row.organisation_id, row.workspace_id, body);
      const patch: Partial<McpServerRow> = { last_updated_at: now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      if (body.input_guardrails !== undefined)
        patch.input_guardrails = body.input_guardrails ? JSON.stringify(body.input_guardrails) : null;
      if (body.output_guardrails !== undefined)
        patch.output_guardrails = body.output_guardrails ? JSON.stringify(body.output_guardrails) : null;
      await deps.servers.update(row.id, patch);
      deps.onChange();
      return { ...row, ...patch };
    },

    /** Deleting archives: the endpoint stops answering at once, the slug is free again, the row stays readable. */
    async archive(principal: Principal, ref: string): Promise<McpServerRow> {
      const row = await find(principal, ref);
      if (row.status !== 'archived') {
        await deps.servers.update(row.id, { status: 'archived', last_updated_at: now() });
        deps.onChange();
      }
      return row;
    },

    async test(principal: Principal, ref: string) {
      const row = await findActive(principal, ref);
      const integration = await integrationOf(row);
      const outcome = await deps.testConnection(integration.id);
      return {
        success: outcome.ok,
        status_code: outcome.statusCode,
        response_time_ms: outcome.elapsedMs,
        url: integration.url,
        server_name: outcome.serverName,
        error: outcome.error,
      };
    },

    async metadata(principal: Principal, ref: string) {
      const row = await find(principal, ref);
      return { ...metadataOf(await integrationOf(row)), mcp_server_id: row.id, mcp_integration_id: row.integration_id };
    },

    async capabilities(principal: Principal, ref: string, query: ListCapabilitiesQuery) {
      const row = await find(principal, ref);
      const window = mcpPageWindow(query);
      const all = await serverCapabilities(row);
      const listed = all
        .filter((c) => query.type === undefined || c.capability.type === query.type)
        .sort((a, b) =>
          a.capability.type === b.capability.type
            ? a.capability.name.localeCompare(b.capability.name)
            : a.capability.type.localeCompare(b.capability.type),
        );
      const page = listed.slice(window.offset, window.offset + window.limit);
      return {
        object: 'list' as const,
        data: page.map((c) => ({
          ...toCapabilityItem(c.capability, c.enabled),
          integration_enabled: c.integrationEnabled,
        })),
        counts: countCapabilities(all.map((c) => ({ type: c.capability.type, enabled: c.enabled }))),
        total: listed.length,
        has_more: window.offset + page.length < listed.length,
      };
    },

    async setCapabilities(principal: Principal, ref: string, body: UpdateCapabilitiesBody): Promise<McpServerRow> {
      const row = await findActive(principal, ref);
      const known = new Set(
        (await deps.integrations.allCapabilities(row.integration_id)).map((c) => `${c.type}\u0000${c.name}`),
      );
      assertKnown(
        body.capabilities,
        known,
        (change) => `${change.type}\u0000${change.name}`,
        (change, i) =>
          notFound(
            `The ${change.type} ${change.name} (the server's integration has not listed it)`,
            `capabilities[${i}].name`,
          ),
      );
      await deps.servers.setCapabilities(row.id, body.capabilities, now());
      deps.onChange();
      return row;
    },
  };
}

export type McpServerService = ReturnType<typeof createMcpServerService>;

function toListItem(row: McpServerListRow, base: string): McpServerListItem {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    name: row.name,
    description: row.description,
    status: row.status,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    owner_id: row.owner_id,
    slug: row.slug,
    workspace_id: row.workspace_id,
    workspace_name: row.workspace_name,
    workspace_slug: row.workspace_slug,
    mcp_integration_id: row.integration_id,
    mcp_integration_slug: row.integration_slug,
    mcp_integration_url: row.integration_url,
    auth_type: row.integration_auth_type,
    url: `${base}${gatewayPath(row.slug)}`,
    object: 'mcp-server',
  };
}

function toServerObject(row: McpServerRow, integration: McpIntegrationRow, base: string): McpServerObject {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    status: row.status,
    description: row.description,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    owner_id: row.owner_id,
    workspace_id: row.workspace_id,
    mcp_integration_id: row.integration_id,
    mcp_integration_details: {
      id: integration.id,
      slug: integration.slug,
      name: integration.name,
      url: integration.url,
      transport: integration.transport,
      auth_type: integration.auth_type,
      status: integration.status,
    },
    default_user_access: row.default_user_access,
    input_guardrails: row.input_guardrails ? (JSON.parse(row.input_guardrails) as unknown[]) : null,
    output_guardrails: row.output_guardrails ? (JSON.parse(row.output_guardrails) as unknown[]) : null,
    url: `${base}${gatewayPath(row.slug)}`,
    object: 'mcp-server',
  };
}
