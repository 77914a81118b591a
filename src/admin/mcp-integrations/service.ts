import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { McpIntegrationRepository, McpIntegrationRow } from '../../storage/repositories/mcp-integrations.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { isMcpSecretTarget, MCP_SECRET_TARGETS } from '../../mcp/mapped-settings.js';
import { parseMappings } from '../../secrets/mappings.js';
import { maskConfigurations, sealConfigurations } from '../credentials/secrets.js';
import type { MappingTargets, SecretMappingRules } from '../secret-references/mappings.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';
import { findByIdOrSlug } from '../tool-servers/rows.js';
import { assertKnown } from '../tool-servers/switches.js';
import { activeWorkspaces, workspaceAccessList, workspaceSwitches } from '../tool-servers/workspace-access.js';
import {
  countCapabilities,
  mcpPageWindow,
  toCapabilityItem,
  type ListCapabilitiesQuery,
  type UpdateCapabilitiesBody,
} from './capability-schemas.js';
import type {
  CreateMcpIntegrationBody,
  ListMcpIntegrationsQuery,
  McpIntegrationObject,
  MetadataObject,
  UpdateMcpIntegrationBody,
  WorkspaceAccessBody,
} from './schemas.js';

export interface McpIntegrationServiceDeps {
  integrations: McpIntegrationRepository;
  workspaces: WorkspaceRepository;
  secretBox: SecretBox;
  clock: Clock;
  /** After every change: the gateway's view of MCP servers is stale. */
  onChange: () => void;
  /** The connection settings changed (or are new): sync the catalogue once the change commits. */
  requestSync: (integrationId: string) => void;
  /** The integration was archived: its pooled upstream connection can go. */
  onArchived?: (integrationId: string) => void;
  /** The rules of secret_mappings (shared with integrations and virtual keys). */
  mappings: SecretMappingRules;
  /** The workspaces that use an integration (its own, its servers'): each mapped reference must allow them. */
  workspacesUsing: (integrationId: string) => Promise<string[]>;
}

type Configurations = Record<string, unknown>;

/** Which configuration fields each auth type needs, and which it cannot use. Mapped fields count as given. */
const OAUTH_FIELDS = [
  'client_id',
  'client_secret',
  'token_url',
  'scope',
  'audience',
  'token_endpoint_auth_method',
  'grant_type',
];
function checkAuth(authType: McpIntegrationRow['auth_type'], config: Configurations, mapped: readonly string[]): void {
  const has = (field: string) =>
    (config[field] !== undefined && config[field] !== null) ||
    mapped.includes(`configurations.${field}`) ||
    (field === 'custom_headers' && mapped.some((m) => m.startsWith('configurations.custom_headers')));
  const require = (field: string) => {
    if (!has(field)) throw invalid(`configurations.${field}`, `auth_type ${authType} needs configurations.${field}.`);
  };
  if (authType === 'headers') {
    const headers = config.custom_headers as Record<string, unknown> | undefined;
    if ((!headers || Object.keys(headers).length === 0) && !has('custom_headers'))
      throw invalid(
        'configurations.custom_headers',
        'auth_type headers needs at least one header in configurations.custom_headers (such as Authorization).',
      );
  }
  if (authType === 'oauth_client_credentials') ['client_id', 'client_secret', 'token_url'].forEach(require);
  if (authType === 'oauth_auto') {
    const grant = config.grant_type ?? (has('client_secret') ? 'client_credentials' : 'authorization_code');
    if (grant === 'client_credentials') ['client_id', 'client_secret'].forEach(require);
  }
  if (authType !== 'oauth_auto' && has('grant_type'))
    throw invalid(
      'configurations.grant_type',
      `configurations.grant_type applies to auth_type oauth_auto, not ${authType}.`,
    );
  if (authType === 'none' || authType === 'headers') {
    const stray = OAUTH_FIELDS.find(has);
    if (stray)
      throw invalid(
        `configurations.${stray}`,
        `configurations.${stray} applies to auth_type oauth_client_credentials and oauth_auto, not ${authType}.`,
      );
  }
}

const MCP_TARGETS: MappingTargets = {
  accepts: isMcpSecretTarget,
  message: `target_field of an MCP integration must be one of ${MCP_SECRET_TARGETS}.`,
};
const mappedFields = (stored: string) => parseMappings(stored).map((m) => m.target_field);

/**
 * The rules of MCP integrations. An organisation integration (made by an admin key without
 * `workspace_id`) is shared with workspaces through its workspace access; only admin keys
 * change it, and a workspace key sees it only when its workspace may use it. A workspace
 * integration belongs to its workspace alone. Anything a key cannot see is a 404.
 */
export function createMcpIntegrationService(deps: McpIntegrationServiceDeps) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const actor = (principal: Principal) => principal.userId ?? principal.keyId;

  function assertOwnOrganisation(principal: Principal, organisationId: string | undefined): void {
    if (organisationId !== undefined && organisationId !== principal.organisationId)
      throw new AppError('NOT_FOUND', `Organisation ${organisationId} not found.`, { param: 'organisation_id' });
  }

  async function visible(principal: Principal, row: McpIntegrationRow): Promise<boolean> {
    if (principal.workspaceId === null) return true;
    if (row.workspace_id !== null) return row.workspace_id === principal.workspaceId;
    return deps.integrations.usableIn(row.id, principal.workspaceId);
  }

  async function find(principal: Principal, ref: string): Promise<McpIntegrationRow> {
    const row = await findByIdOrSlug(deps.integrations, principal.organisationId, ref);
    if (!row || !(await visible(principal, row))) throw notFound(`MCP integration ${ref}`, 'id');
    return row;
  }

  async function findChangeable(principal: Principal, ref: string): Promise<McpIntegrationRow> {
    const row = await find(principal, ref);
    if (row.workspace_id === null && principal.workspaceId !== null)
      throw new AppError(
        'WORKSPACE_FORBIDDEN',
        "A workspace key uses the organisation's MCP integrations but cannot change them.",
      );
    if (row.status !== 'active') throw invalid('id', `MCP integration ${row.slug} is archived and cannot be changed.`);
    return row;
  }

  async function toObjects(principal: Principal, rows: McpIntegrationRow[]): Promise<McpIntegrationObject[]> {
    const counts = await deps.integrations.workspaceCounts(principal.organisationId, rows);
    return rows.map((row) => toMcpIntegrationObject(row, counts.get(row.id) ?? 0));
  }

  return {
    find,

    async create(principal: Principal, body: CreateMcpIntegrationBody): Promise<McpIntegrationRow> {
      assertOwnOrganisation(principal, body.organisation_id);
      const workspace = await resolveWorkspace(deps.workspaces, principal, body.workspace_id, { required: false });
      if (workspace && workspace.status !== 'active')
        throw invalid('workspace_id', `Workspace ${workspace.slug} is archived.`);
      const configurations = body.configurations ?? {};
      const secretMappings = body.secret_mappings
        ? await deps.mappings.store(
            principal,
            body.secret_mappings,
            workspace ? [workspace.id] : [],
            'secret_mappings',
            MCP_TARGETS,
          )
        : '[]';
      checkAuth(body.auth_type, configurations, mappedFields(secretMappings));
      const slug = body.slug ?? slugify(body.name);
      if ((await deps.integrations.findBySlug(principal.organisationId, slug))?.status === 'active')
        throw new AppError('CONFLICT', `An MCP integration with slug ${slug} already exists.`, { param: 'slug' });
      const stamp = now();
      const row: McpIntegrationRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace?.id ?? null,
        slug,
        name: body.name,
        description: body.description ?? null,
        url: body.url,
        transport: body.transport,
        auth_type: body.auth_type,
        configurations: sealConfigurations(deps.secretBox, configurations),
        secret_mappings: secretMappings,
        global_workspace_access: 0,
        status: 'active',
        owner_id: actor(principal),
        server_info: null,
        protocol_version: null,
        capability_flags: null,
        instructions: null,
        sync_status: 'pending',
        last_synced_at: null,
        sync_error: null,
        created_at: stamp,
        last_updated_at: stamp,
      };
      await insertUnique(() => deps.integrations.insert(row), slugTaken(slug));
      deps.onChange();
      deps.requestSync(row.id);
      return row;
    },

    async list(principal: Principal, query: ListMcpIntegrationsQuery) {
      assertOwnOrganisation(principal, query.organisation_id);
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const offset = query.current_page * query.page_size;
      const { total, rows } = await deps.integrations.list({
        organisationId: principal.organisationId,
        type: query.type,
        usableInWorkspaceId: workspace?.id,
        search: query.search,
        status: query.status,
        limit: query.page_size,
        offset,
      });
      return { total, has_more: offset + rows.length < total, data: await toObjects(principal, rows) };
    },

    async get(principal: Principal, ref: string) {
      const row = await find(principal, ref);
      const [object] = await toObjects(principal, [row]);
      return { ...object!, global_workspace_access: { enabled: row.global_workspace_access === 1 } };
    },

    async update(principal: Principal, ref: string, body: UpdateMcpIntegrationBody): Promise<McpIntegrationRow> {
      const row = await findChangeable(principal, ref);
      const authType = body.auth_type ?? row.auth_type;
      const patch: Partial<McpIntegrationRow> = { last_updated_at: now() };
      if (body.secret_mappings !== undefined)
        patch.secret_mappings = await deps.mappings.store(
          principal,
          body.secret_mappings,
          await deps.workspacesUsing(row.id),
          'secret_mappings',
          MCP_TARGETS,
        );
      if (body.configurations !== undefined)
        patch.configurations = sealConfigurations(deps.secretBox, body.configurations, row.configurations);
      checkAuth(
        authType,
        maskConfigurations(patch.configurations ?? row.configurations),
        mappedFields(patch.secret_mappings ?? row.secret_mappings),
      );
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      if (body.url !== undefined) patch.url = body.url;
      if (body.transport !== undefined) patch.transport = body.transport;
      if (body.auth_type !== undefined) patch.auth_type = body.auth_type;
      await deps.integrations.update(row.id, patch);
      deps.onChange();
      const reconnects =
        (patch.url !== undefined && patch.url !== row.url) ||
        (patch.transport !== undefined && patch.transport !== row.transport) ||
        (patch.auth_type !== undefined && patch.auth_type !== row.auth_type) ||
        (patch.configurations !== undefined && patch.configurations !== row.configurations) ||
        (patch.secret_mappings !== undefined && patch.secret_mappings !== row.secret_mappings);
      if (reconnects) deps.requestSync(row.id);
      return { ...row, ...patch };
    },

    /** Deleting archives the integration and its servers: they stop answering at once and stay readable. */
    async archive(principal: Principal, ref: string): Promise<McpIntegrationRow> {
      const row = await find(principal, ref);
      if (row.workspace_id === null && principal.workspaceId !== null)
        throw new AppError(
          'WORKSPACE_FORBIDDEN',
          "A workspace key uses the organisation's MCP integrations but cannot delete them.",
        );
      if (row.status !== 'archived') {
        await deps.integrations.archiveWithServers(row.id, now());
        deps.onChange();
        deps.onArchived?.(row.id);
      }
      return row;
    },

    async workspaceAccess(principal: Principal, ref: string) {
      const row = await find(principal, ref);
      const workspaces = await activeWorkspaces(deps.workspaces, principal.organisationId);
      if (row.workspace_id !== null) {
        const own = workspaces.filter((w) => w.id === row.workspace_id);
        return {
          object: 'list' as const,
          total: own.length,
          data: own.map((w) => ({ id: w.id, slug: w.slug, name: w.name, enabled: true, has_override: true })),
          global_workspace_access: { enabled: false },
        };
      }
      return workspaceAccessList(row, workspaces, await deps.integrations.listWorkspaceAccess(row.id));
    },

    async setWorkspaceAccess(principal: Principal, ref: string, body: WorkspaceAccessBody): Promise<McpIntegrationRow> {
      const row = await findChangeable(principal, ref);
      if (row.workspace_id !== null)
        throw invalid(
          'workspaces',
          `MCP integration ${row.slug} belongs to one workspace; only organisation integrations are shared with workspaces.`,
        );
      const rows = await workspaceSwitches(deps.workspaces, principal.organisationId, body.workspaces, (id, param) =>
        notFound(`Workspace ${id}`, param),
      );
      await deps.integrations.setWorkspaceAccess(row.id, {
        clear: body.override_existing_workspace_access,
        rows,
        globalAccess: body.global_workspace_access?.enabled,
        stamp: now(),
      });
      deps.onChange();
      return row;
    },

    async capabilities(principal: Principal, ref: string, query: ListCapabilitiesQuery) {
      const row = await find(principal, ref);
      const window = mcpPageWindow(query);
      const [page, all] = await Promise.all([
        deps.integrations.listCapabilities(row.id, { ...window, type: query.type }),
        deps.integrations.allCapabilities(row.id),
      ]);
      return {
        object: 'list' as const,
        data: page.rows.map((capability) => toCapabilityItem(capability)),
        counts: countCapabilities(all.map((c) => ({ type: c.type, enabled: c.enabled === 1 }))),
        total: page.total,
        has_more: window.offset + page.rows.length < page.total,
      };
    },

    async setCapabilities(principal: Principal, ref: string, body: UpdateCapabilitiesBody): Promise<McpIntegrationRow> {
      const row = await findChangeable(principal, ref);
      const known = new Set((await deps.integrations.allCapabilities(row.id)).map((c) => `${c.type}\u0000${c.name}`));
      assertKnown(
        body.capabilities,
        known,
        (change) => `${change.type}\u0000${change.name}`,
        (change, i) =>
          notFound(
            `The ${change.type} ${change.name} (MCP integration ${row.slug} has not listed it; see GET /v1/mcp-integrations/${row.id}/capabilities)`,
            `capabilities[${i}].name`,
          ),
      );
      await deps.integrations.setCapabilitiesEnabled(row.id, body.capabilities, now());
      deps.onChange();
      return row;
    },

    async metadata(principal: Principal, ref: string): Promise<MetadataObject> {
      return metadataOf(await find(principal, ref));
    },
  };
}

export type McpIntegrationService = ReturnType<typeof createMcpIntegrationService>;

export function toMcpIntegrationObject(row: McpIntegrationRow, workspacesCount: number): McpIntegrationObject {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    owner_id: row.owner_id,
    status: row.status,
    type: row.workspace_id === null ? 'organisation' : 'workspace',
    workspace_id: row.workspace_id,
    url: row.url,
    transport: row.transport,
    auth_type: row.auth_type,
    configurations: maskConfigurations(row.configurations),
    secret_mappings: JSON.parse(row.secret_mappings) as unknown[],
    workspaces_count: workspacesCount,
    sync_status: row.sync_status,
    last_synced_at: row.last_synced_at,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'mcp-integration',
  };
}

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** What the last sync learnt of the server (nulls before the first one succeeded). */
export function metadataOf(row: McpIntegrationRow): MetadataObject {
  const info = row.server_info ? (JSON.parse(row.server_info) as Record<string, unknown>) : {};
  return {
    server_name: stringOrNull(info.name),
    server_version: stringOrNull(info.version),
    server_title: stringOrNull(info.title),
    server_description: stringOrNull(info.description),
    icons: info.icons ?? null,
    website_url: stringOrNull(info.websiteUrl),
    protocol_version: row.protocol_version,
    capability_flags: row.capability_flags ? (JSON.parse(row.capability_flags) as Record<string, unknown>) : null,
    instructions: row.instructions,
    sync_status: row.sync_status,
    last_synced_at: row.last_synced_at,
    sync_error: row.sync_error,
  };
}
