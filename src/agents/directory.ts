import type { Clock } from '../lib/clock.js';
import { isUuid } from '../lib/ids.js';
import { createLoadingCache } from '../lib/loading-cache.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { AgentIntegrationRepository } from '../storage/repositories/agent-integrations.js';
import type { AgentServerRepository } from '../storage/repositories/agent-servers.js';
import { cardUrlOf } from './card.js';
import { authHeaders, openAuth } from './upstream-auth.js';

/** Everything the gateway needs to serve one agent server, read once and cached. */
export interface AgentTarget {
  serverId: string;
  slug: string;
  organisationId: string;
  workspaceId: string;
  integrationId: string;
  integrationSlug: string;
  /** False when the integration is not enabled for the server's workspace. */
  integrationUsable: boolean;
  cardUrl: string;
  /** The JSON-RPC endpoint: the integration's rpc_url, else the one its card names; null when neither is known. */
  rpcUrl: string | null;
  /** Why there is no endpoint (the last card read's error), for the refusal. */
  syncError: string | null;
  /** The integration's credentials as headers; never logged or answered. */
  headers: Readonly<Record<string, string>>;
  defaultUserAccess: 'allow' | 'deny';
  userOverrides: ReadonlyMap<string, boolean>;
  /** Skills disabled on the integration or on the server. */
  hiddenSkills: ReadonlySet<string>;
}

/**
 * Finds agent servers for the gateway by id or slug within an organisation. Entries are kept for
 * a few seconds; every change through the admin API clears them at once (on this instance, and
 * on the others through the change bus), so access changes apply to the next call.
 */
export function createAgentDirectory(deps: {
  integrations: AgentIntegrationRepository;
  servers: AgentServerRepository;
  secretBox: SecretBox;
  clock: Clock;
  ttlMs?: number;
}) {
  const cache = createLoadingCache<AgentTarget | null>({ clock: deps.clock, ttlMs: deps.ttlMs ?? 5_000 });

  async function load(organisationId: string, idOrSlug: string): Promise<AgentTarget | null> {
    const server = isUuid(idOrSlug)
      ? await deps.servers.findById(organisationId, idOrSlug.toLowerCase())
      : await deps.servers.findBySlug(organisationId, idOrSlug);
    if (!server || server.status !== 'active') return null;
    // An archived integration takes its servers with it.
    const integration = await deps.integrations.findById(organisationId, server.integration_id);
    if (!integration || integration.status !== 'active') return null;
    const [usable, skills, serverSkills, overrides] = await Promise.all([
      deps.integrations.usableInWorkspace(integration.id, server.workspace_id),
      deps.integrations.listSkills(integration.id),
      deps.servers.listSkillSwitches(server.id),
      deps.servers.listUserOverrides(server.id),
    ]);
    const hidden = new Set([
      ...skills.filter((skill) => skill.enabled !== 1).map((skill) => skill.skill_id),
      ...serverSkills.filter((skill) => skill.enabled !== 1).map((skill) => skill.skill_id),
    ]);
    return {
      serverId: server.id,
      slug: server.slug,
      organisationId,
      workspaceId: server.workspace_id,
      integrationId: integration.id,
      integrationSlug: integration.slug,
      integrationUsable: usable,
      cardUrl: cardUrlOf(integration.url),
      rpcUrl: integration.rpc_url ?? integration.card_rpc_url,
      syncError: integration.sync_error,
      headers: authHeaders(integration.auth_type, openAuth(deps.secretBox, integration.encrypted_auth)),
      defaultUserAccess: server.default_user_access,
      userOverrides: new Map(overrides.map((row) => [row.user_id, row.enabled === 1])),
      hiddenSkills: hidden,
    };
  }

  return {
    find: (organisationId: string, idOrSlug: string): Promise<AgentTarget | null> =>
      cache.get(`${organisationId}\n${idOrSlug}`, () => load(organisationId, idOrSlug)),
    invalidate: () => cache.clear(),
  };
}

export type AgentDirectory = ReturnType<typeof createAgentDirectory>;

/**
 * Whether a caller may use the server. A person's key (a workspace user key, or a JWT that
 * names a user) follows the user's override, else the server's default; service keys (admin
 * keys and workspace service keys, whoever made them) are machines, not subject to user access.
 */
export function userMayCall(target: AgentTarget, caller: { keyType: string; userId: string | null }): boolean {
  if (caller.keyType !== 'workspace-user' || caller.userId === null) return true;
  return target.userOverrides.get(caller.userId) ?? target.defaultUserAccess === 'allow';
}
