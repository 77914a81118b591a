import type { Clock } from '../lib/clock.js';
import { isUuid } from '../lib/ids.js';
import type { McpIntegrationRepository, McpIntegrationRow } from '../storage/repositories/mcp-integrations.js';
import type { McpServerRepository, McpServerRow } from '../storage/repositories/mcp-servers.js';
import type { McpCapabilityType, McpEndpoint } from './types.js';
import { templateMatcher } from './uri-template.js';

/** What the gateway knows of one MCP server for a call: its rows, connection and switches. */
export interface McpServerView {
  server: McpServerRow;
  integration: McpIntegrationRow;
  endpoint: McpEndpoint;
  /** Whether the integration may be used in the server's workspace. */
  workspaceEnabled: boolean;
  /** Whether a capability is switched off (by the integration or the server). */
  disabled(type: McpCapabilityType, name: string): boolean;
  /** Whether the catalogue knows the capability (a sync has seen it). */
  known(type: McpCapabilityType, name: string): boolean;
  /** Whether reading this URI is refused: a disabled resource, or only disabled templates match it. */
  resourceRefused(uri: string): boolean;
}

export interface McpDirectory {
  /** The server by id or slug in the organisation; null when there is none (archived servers included). */
  find(organisationId: string, ref: string): Promise<McpServerView | null>;
  /** The user's override on the server: true, false, or null when there is none. */
  userOverride(serverId: string, userId: string): Promise<boolean | null>;
  invalidate(): void;
}

const key = (type: McpCapabilityType, name: string) => `${type}\u0000${name}`;

/**
 * The gateway's cached view of MCP servers: one server, its integration, its workspace access
 * and its capability switches are read once per `ttlMs` (other instances' changes are seen
 * within it) and dropped at once by `invalidate` (this instance's changes, and syncs).
 */
export function createMcpDirectory(deps: {
  integrations: McpIntegrationRepository;
  servers: McpServerRepository;
  endpointOf: (row: McpIntegrationRow) => Promise<McpEndpoint>;
  clock: Clock;
  ttlMs?: number;
}): McpDirectory {
  const ttl = deps.ttlMs ?? 5_000;
  const views = new Map<string, { at: number; value: Promise<McpServerView | null> }>();
  const overrides = new Map<string, { at: number; value: Promise<boolean | null> }>();

  function cached<T>(map: Map<string, { at: number; value: Promise<T> }>, id: string, load: () => Promise<T>) {
    const now = deps.clock.now();
    const hit = map.get(id);
    if (hit && now - hit.at < ttl) return hit.value;
    const value = load();
    map.set(id, { at: now, value });
    value.catch(() => map.get(id)?.value === value && map.delete(id));
    return value;
  }

  async function load(organisationId: string, ref: string): Promise<McpServerView | null> {
    const server = isUuid(ref)
      ? await deps.servers.findById(organisationId, ref.toLowerCase())
      : await deps.servers.findBySlug(organisationId, ref);
    if (!server || server.status !== 'active') return null;
    const integration = await deps.integrations.findById(organisationId, server.integration_id);
    if (!integration || integration.status !== 'active') return null;
    const [workspaceEnabled, capabilities, serverSwitches, endpoint] = await Promise.all([
      deps.integrations.usableIn(integration.id, server.workspace_id),
      deps.integrations.allCapabilities(integration.id),
      deps.servers.capabilityOverrides(server.id),
      deps.endpointOf(integration),
    ]);
    const off = new Set<string>();
    const known = new Set<string>();
    for (const capability of capabilities) {
      known.add(key(capability.type, capability.name));
      if (capability.enabled !== 1) off.add(key(capability.type, capability.name));
    }
    for (const row of serverSwitches) if (row.enabled !== 1) off.add(key(row.type, row.name));
    const templates = capabilities
      .filter((c) => c.type === 'resource_template')
      .map((c) => ({ matcher: templateMatcher(c.name), off: off.has(key('resource_template', c.name)) }));
    return {
      server,
      integration,
      endpoint,
      workspaceEnabled,
      disabled: (type, name) => off.has(key(type, name)),
      known: (type, name) => known.has(key(type, name)),
      resourceRefused(uri) {
        if (known.has(key('resource', uri))) return off.has(key('resource', uri));
        const matching = templates.filter((t) => t.matcher.test(uri));
        return matching.length > 0 && matching.every((t) => t.off);
      },
    };
  }

  return {
    find: (organisationId, ref) => cached(views, `${organisationId}\u0000${ref}`, () => load(organisationId, ref)),
    userOverride: (serverId, userId) =>
      cached(overrides, `${serverId}\u0000${userId}`, async () => {
        const row = await deps.servers.findUserAccess(serverId, userId);
        return row ? row.enabled === 1 : null;
      }),
    invalidate() {
      views.clear();
      overrides.clear();
    },
  };
}
