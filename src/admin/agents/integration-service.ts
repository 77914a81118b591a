import { cardUrlOf } from '../../agents/card.js';
import type { CardRead } from '../../agents/card-reader.js';
import { authHeaders, openAuth, sealAuth, type AgentAuth, type AgentAuthType } from '../../agents/upstream-auth.js';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import { REDACTED } from '../../lib/redact.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AgentIntegrationRepository, AgentIntegrationRow } from '../../storage/repositories/agent-integrations.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';
import type {
  CreateIntegrationBody,
  IntegrationObject,
  ListIntegrationsQuery,
  MetadataObject,
  UpdateIntegrationBody,
} from './schemas.js';
import type { IntegrationFinder } from './integration-finder.js';
import { FORGOTTEN_CARD, metadataOf, syncFrom } from './sync.js';

/** Where a card is read and with what credentials: what a sync needs, worked out before the request's transaction. */
export interface CardTarget {
  cardUrl: string;
  headers: Record<string, string>;
}

/**
 * The rules of agent integrations. An organisation integration (an admin key without
 * `workspace_id`) is changed by admin keys only, and a workspace sees it once it is enabled
 * there; a workspace integration belongs to its workspace. Credentials are sealed at rest and
 * never answered: `[REDACTED]` stands for them, and sending it back keeps the stored value.
 * Card reads happen before the request's transaction (see routes); the service only stores them.
 */
export function createAgentIntegrationService(deps: {
  integrations: AgentIntegrationRepository;
  finder: IntegrationFinder;
  workspaces: WorkspaceRepository;
  secretBox: SecretBox;
  clock: Clock;
  onChange: () => void;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const actor = (principal: Principal) => principal.userId ?? principal.keyId;

  function assertOwnOrganisation(principal: Principal, organisationId: string | undefined): void {
    if (organisationId !== undefined && organisationId !== principal.organisationId)
      throw new AppError('NOT_FOUND', `Organisation ${organisationId} not found.`, { param: 'organisation_id' });
  }

  const { find, findChangeable } = deps.finder;

  function checkAuth(type: AgentAuthType, auth: AgentAuth): void {
    if (type === 'headers' && Object.keys(auth.headers ?? {}).length === 0)
      throw invalid('configurations.custom_headers', 'auth_type headers needs at least one custom header.');
    if (type === 'bearer' && !auth.token)
      throw invalid('configurations.bearer_token', 'auth_type bearer needs a bearer_token.');
    if (type === 'none' && (auth.token || Object.keys(auth.headers ?? {}).length > 0))
      throw invalid('auth_type', 'auth_type none sends no credentials; set auth_type to headers or bearer.');
    if (type !== 'headers' && auth.headers && Object.keys(auth.headers).length > 0)
      throw invalid('configurations.custom_headers', `custom_headers go with auth_type headers, not ${type}.`);
    if (type !== 'bearer' && auth.token)
      throw invalid('configurations.bearer_token', `bearer_token goes with auth_type bearer, not ${type}.`);
  }

  /** The credentials after an update: what is sent, with `[REDACTED]` standing for what is stored. */
  function mergedAuth(row: AgentIntegrationRow, body: UpdateIntegrationBody): { type: AgentAuthType; auth: AgentAuth } {
    const type = body.auth_type ?? row.auth_type;
    const stored = openAuth(deps.secretBox, row.encrypted_auth);
    const sent = body.configurations;
    if (sent === undefined) return { type, auth: type === row.auth_type ? stored : {} };
    const headers = sent.custom_headers
      ? Object.fromEntries(
          Object.entries(sent.custom_headers).map(([name, value]) => [
            name,
            value === REDACTED ? (storedHeader(stored, name) ?? value) : value,
          ]),
        )
      : undefined;
    const token = sent.bearer_token === REDACTED ? (stored.token ?? sent.bearer_token) : sent.bearer_token;
    return { type, auth: { ...(headers ? { headers } : {}), ...(token ? { token } : {}) } };
  }

  function toObject(row: AgentIntegrationRow, serversCount: number): IntegrationObject {
    const auth = openAuth(deps.secretBox, row.encrypted_auth);
    return {
      id: row.id,
      name: row.name,
      slug: row.slug,
      description: row.description,
      organisation_id: row.organisation_id,
      workspace_id: row.workspace_id,
      type: row.workspace_id === null ? 'organisation' : 'workspace',
      url: row.url,
      rpc_url: row.rpc_url,
      auth_type: row.auth_type,
      configurations: {
        ...(auth.headers
          ? { custom_headers: Object.fromEntries(Object.keys(auth.headers).map((name) => [name, REDACTED] as const)) }
          : {}),
        ...(auth.token ? { bearer_token: REDACTED } : {}),
      },
      global_workspace_access: row.global_workspace_access === 1,
      status: row.status,
      sync_status: row.sync_status,
      last_synced_at: row.last_synced_at,
      servers_count: serversCount,
      owner_id: row.owner_id,
      updated_by: row.updated_by,
      created_at: row.created_at,
      last_updated_at: row.last_updated_at,
      object: 'agent_integration',
    };
  }

  const targetOf = (url: string, type: AgentAuthType, auth: AgentAuth): CardTarget => ({
    cardUrl: cardUrlOf(url),
    headers: authHeaders(type, auth),
  });

  async function saveRead(row: AgentIntegrationRow, read: CardRead): Promise<AgentIntegrationRow> {
    const { sync, skills } = syncFrom(read, row, now());
    await deps.integrations.saveSync(row.id, sync, skills);
    return { ...row, ...sync };
  }

  return {
    find,
    findChangeable,

    async list(principal: Principal, query: ListIntegrationsQuery) {
      assertOwnOrganisation(principal, query.organisation_id);
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const { total, rows } = await deps.integrations.list({
        organisationId: principal.organisationId,
        ...(workspace ? { usableInWorkspaceId: workspace.id } : {}),
        type: query.type === 'all' ? undefined : query.type,
        status: query.status,
        search: query.search,
        limit: query.page_size,
        offset: query.current_page * query.page_size,
      });
      const counts = await deps.integrations.countServers(rows.map((row) => row.id));
      return { total, data: rows.map((row) => toObject(row, counts.get(row.id) ?? 0)) };
    },

    /** Where the card of an integration about to be created is. */
    createTarget(body: CreateIntegrationBody): CardTarget {
      return targetOf(body.url, body.auth_type, authOf(body.configurations));
    },

    async create(principal: Principal, body: CreateIntegrationBody, read: CardRead | null) {
      assertOwnOrganisation(principal, body.organisation_id);
      const workspace = await resolveWorkspace(deps.workspaces, principal, body.workspace_id, { required: false });
      if (workspace && workspace.status !== 'active')
        throw invalid('workspace_id', `Workspace ${workspace.slug} is archived.`);
      if (workspace && body.global_workspace_access !== undefined)
        throw invalid(
          'global_workspace_access',
          'A workspace integration belongs to its workspace; global_workspace_access is for organisation integrations.',
        );
      const auth = authOf(body.configurations);
      checkAuth(body.auth_type, auth);
      const slug = body.slug ?? slugify(body.name);
      const taken = await deps.integrations.findBySlug(principal.organisationId, slug);
      if (taken?.status === 'active')
        throw new AppError('CONFLICT', `An active agent integration with slug ${slug} already exists.`, {
          param: 'slug',
        });
      const stamp = now();
      const row: AgentIntegrationRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace?.id ?? null,
        slug,
        name: body.name,
        description: body.description ?? null,
        url: body.url,
        rpc_url: body.rpc_url ?? null,
        auth_type: body.auth_type,
        encrypted_auth: sealAuth(deps.secretBox, body.auth_type, auth),
        global_workspace_access: body.global_workspace_access === true ? 1 : 0,
        status: 'active',
        owner_id: actor(principal),
        updated_by: null,
        created_at: stamp,
        last_updated_at: stamp,
        sync_status: 'never',
        sync_error: null,
        last_synced_at: null,
        card: null,
        card_rpc_url: null,
        agent_name: null,
        agent_version: null,
        protocol_version: null,
      };
      await insertUnique(() => deps.integrations.insert(row), slugTaken(slug));
      const synced = read ? await saveRead(row, read) : row;
      deps.onChange();
      return synced;
    },

    async get(principal: Principal, idOrSlug: string): Promise<IntegrationObject> {
      const row = await find(principal, idOrSlug);
      const counts = await deps.integrations.countServers([row.id]);
      return toObject(row, counts.get(row.id) ?? 0);
    },

    /** Where the card is after an update, when the update changes where or how it is read; else null. */
    async updateTarget(
      principal: Principal,
      idOrSlug: string,
      body: UpdateIntegrationBody,
    ): Promise<CardTarget | null> {
      if (body.url === undefined && body.rpc_url === undefined && body.auth_type === undefined && !body.configurations)
        return null;
      const row = await findChangeable(principal, idOrSlug);
      const { type, auth } = mergedAuth(row, body);
      return targetOf(body.url ?? row.url, type, auth);
    },

    async update(principal: Principal, idOrSlug: string, body: UpdateIntegrationBody, read: CardRead | null) {
      const row = await findChangeable(principal, idOrSlug);
      const { type, auth } = mergedAuth(row, body);
      checkAuth(type, auth);
      const patch: Partial<AgentIntegrationRow> = {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.url !== undefined ? { url: body.url } : {}),
        ...(body.rpc_url !== undefined ? { rpc_url: body.rpc_url } : {}),
        auth_type: type,
        encrypted_auth: sealAuth(deps.secretBox, type, auth),
        updated_by: actor(principal),
        last_updated_at: now(),
      };
      await deps.integrations.update(row.id, patch);
      // Another agent: what was known of the old one (card, skills and their switches) no longer applies.
      const moved = body.url !== undefined && body.url !== row.url;
      if (moved) await deps.integrations.saveSync(row.id, FORGOTTEN_CARD, []);
      const updated = { ...row, ...patch, ...(moved ? FORGOTTEN_CARD : {}) };
      const result = read ? await saveRead(updated, read) : updated;
      deps.onChange();
      return result;
    },

    /** Archives: its servers stop answering at once, its slug is free, and it stays readable. */
    async archive(principal: Principal, idOrSlug: string): Promise<AgentIntegrationRow> {
      const row = await find(principal, idOrSlug);
      if (row.workspace_id === null && principal.workspaceId !== null)
        throw new AppError(
          'WORKSPACE_FORBIDDEN',
          "A workspace key cannot archive the organisation's agent integrations.",
        );
      if (row.status !== 'archived') {
        await deps.integrations.update(row.id, {
          status: 'archived',
          updated_by: actor(principal),
          last_updated_at: now(),
        });
        deps.onChange();
      }
      return row;
    },

    async syncTarget(principal: Principal, idOrSlug: string): Promise<CardTarget> {
      const row = await findChangeable(principal, idOrSlug);
      return targetOf(row.url, row.auth_type, openAuth(deps.secretBox, row.encrypted_auth));
    },

    /** Stores a card read made for this integration (sync, a server's test). */
    async sync(
      principal: Principal,
      idOrSlug: string,
      read: CardRead,
    ): Promise<{ row: AgentIntegrationRow; metadata: MetadataObject }> {
      const row = await findChangeable(principal, idOrSlug);
      const synced = await saveRead(row, read);
      deps.onChange();
      return { row, metadata: metadataOf(synced, (await deps.integrations.listSkills(row.id)).length) };
    },

    /** The card read of an integration a server uses, whoever may test the server (no change rights needed). */
    cardTargetOf(row: AgentIntegrationRow): CardTarget {
      return targetOf(row.url, row.auth_type, openAuth(deps.secretBox, row.encrypted_auth));
    },

    /** Stores a read made by a server's test, when it found a card: it refreshes the skills everyone sees. */
    async saveTestRead(row: AgentIntegrationRow, read: CardRead): Promise<void> {
      if (!read.ok || row.status !== 'active') return;
      await saveRead(row, read);
      deps.onChange();
    },

    async metadata(principal: Principal, idOrSlug: string): Promise<MetadataObject> {
      const row = await find(principal, idOrSlug);
      return metadataOf(row, (await deps.integrations.listSkills(row.id)).length);
    },
  };
}

export type AgentIntegrationService = ReturnType<typeof createAgentIntegrationService>;

function authOf(configurations: CreateIntegrationBody['configurations']): AgentAuth {
  return {
    ...(configurations?.custom_headers ? { headers: configurations.custom_headers } : {}),
    ...(configurations?.bearer_token ? { token: configurations.bearer_token } : {}),
  };
}

const storedHeader = (auth: AgentAuth, name: string): string | undefined =>
  auth.headers?.[name] ??
  Object.entries(auth.headers ?? {}).find(([stored]) => stored.toLowerCase() === name.toLowerCase())?.[1];
