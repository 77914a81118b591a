import { REDACTED } from '../../lib/redact.js';
import { changedFields, pick, same, shownConfigurations } from './compare.js';
import type { Kind, Resource, Step } from './plan-types.js';
import type { ToolSectionsFile } from './tools-schema.js';

/** A switch as the server lists it: a capability (`type:name`) or a skill (its id). */
export interface Switch {
  key: string;
  enabled: boolean;
}

export interface WorkspaceAccessRow {
  global_workspace_access: { enabled: boolean };
  data: Array<{ slug: string; enabled: boolean; has_override: boolean }>;
}

export interface UserAccessRow {
  default_user_access: string;
  data: Array<{ user_id: string; enabled: boolean; has_override: boolean }>;
}

export interface ToolIntegrationRow extends Resource {
  slug: string;
  workspace_id: string | null;
  sync_status?: string;
}

export interface ToolServerRow extends Resource {
  slug: string;
  workspace_id: string;
  /** The slug of the integration it is made from. */
  integration_slug: string;
  default_user_access?: string;
}

/** What the server has of one family (MCP or agents), for what the file names. */
export interface FamilyState {
  integrations: ToolIntegrationRow[];
  /** By integration slug: those whose file entry has `workspace_access`. */
  access: Record<string, WorkspaceAccessRow>;
  /** By integration slug: those whose file entry has switches. */
  integrationSwitches: Record<string, Switch[]>;
  servers: ToolServerRow[];
  serverSwitches: Record<string, Switch[]>;
  userAccess: Record<string, UserAccessRow>;
}

export interface ToolState {
  mcp: FamilyState;
  agent: FamilyState;
  /** The organisation's users, when the file names some in `user_access`. */
  users: Array<{ id: string; email: string }>;
}

type Entry = Record<string, unknown> & { slug: string; name: string; workspace?: string };
type DesiredSwitch = { key: string; body: Record<string, unknown> };

/** What differs between the MCP and the agent resources: paths, field names and how secrets are shown. */
export interface Family {
  prefix: 'mcp' | 'agent';
  integrationsPath: string;
  serversPath: string;
  integrationIdField: string;
  switchesPath: 'capabilities' | 'skills';
  extraIntegrationFields: readonly string[];
  extraServerFields: readonly string[];
  switchesOf(entry: Entry): DesiredSwitch[] | undefined;
  switchBody(items: Record<string, unknown>[]): Record<string, unknown>;
  /** The configurations as the server shows them back. */
  shown(config: Record<string, unknown>): unknown;
  /** Whether the switches exist only once a background sync has run (MCP capabilities). */
  syncsInBackground: boolean;
}

type CapabilityEntry = { name: string; type: string; enabled: boolean };

export const MCP: Family = {
  prefix: 'mcp',
  integrationsPath: '/v1/mcp-integrations',
  serversPath: '/v1/mcp-servers',
  integrationIdField: 'mcp_integration_id',
  switchesPath: 'capabilities',
  extraIntegrationFields: ['transport', 'auth_type'],
  extraServerFields: ['input_guardrails', 'output_guardrails'],
  switchesOf: (entry) =>
    (entry.capabilities as CapabilityEntry[] | undefined)?.map((c) => ({ key: `${c.type}:${c.name}`, body: c })),
  switchBody: (capabilities) => ({ capabilities }),
  shown: shownConfigurations,
  syncsInBackground: true,
};

export const AGENT: Family = {
  prefix: 'agent',
  integrationsPath: '/v1/agent-integrations',
  serversPath: '/v1/agent-servers',
  integrationIdField: 'agent_integration_id',
  switchesPath: 'skills',
  extraIntegrationFields: ['rpc_url', 'auth_type'],
  extraServerFields: [],
  switchesOf: (entry) =>
    (entry.skills as Array<{ id: string; enabled: boolean }> | undefined)?.map((s) => ({ key: s.id, body: s })),
  switchBody: (skills) => ({ skills }),
  // Agent credentials are shown as [REDACTED], whatever their length.
  shown: (config) =>
    Object.fromEntries(
      Object.entries(config).map(([name, value]) => [
        name,
        name === 'custom_headers' && value && typeof value === 'object'
          ? Object.fromEntries(Object.keys(value).map((header) => [header, REDACTED]))
          : name === 'bearer_token'
            ? REDACTED
            : value,
      ]),
    ),
  syncsInBackground: false,
};

const enc = encodeURIComponent;
const defined = (value: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));

/** Helpers the main plan hands over: workspace slugs of rows, and its checks of named workspaces. */
export interface PlanContext {
  wsOf: (row: { workspace_id: string | null }) => string | null;
  needWs: (what: string, slug: string) => string;
  defaultWs: string;
  problems: string[];
}

/** Create when absent, update what differs, or unchanged: one request either way. */
function oneStep(
  kind: Kind,
  name: string,
  exists: boolean,
  changes: string[],
  request: NonNullable<Step['request']>,
): Step {
  if (exists && changes.length === 0) return { kind, name, action: 'unchanged', changes };
  return { kind, name, action: exists ? 'update' : 'create', changes, request };
}

function switchStep(
  kind: Kind,
  name: string,
  exists: boolean,
  current: readonly Switch[],
  desired: DesiredSwitch[],
  request: (items: Record<string, unknown>[]) => NonNullable<Step['request']>,
): Step {
  const changed = desired.filter((d) => current.find((c) => c.key === d.key)?.enabled !== d.body.enabled);
  return oneStep(
    kind,
    name,
    exists,
    changed.map((d) => d.key),
    request(changed.map((d) => d.body)),
  );
}

/**
 * Steps for one family's integrations and servers, in order: each integration, its workspace
 * access and its switches; then each server, its switches and its user access.
 */
export function planToolFamily(
  family: Family,
  integrations: readonly Entry[],
  servers: readonly Entry[],
  state: FamilyState,
  users: ToolState['users'],
  ctx: PlanContext,
): Step[] {
  const steps: Step[] = [];
  const label = family.prefix === 'mcp' ? 'MCP' : 'agent';
  const kind = (suffix: string) => `${family.prefix}_${suffix}` as Kind;
  const inFile = new Set(integrations.map((i) => i.slug));
  /** Integrations whose switches exist only after a sync that this run starts (or one still pending). */
  const unsynced = new Set<string>();

  for (const i of integrations) {
    const ws = i.workspace === undefined ? null : ctx.needWs(`${label} integration ${i.slug}`, i.workspace);
    const now = state.integrations.find((row) => row.slug === i.slug);
    if (now && ctx.wsOf(now) !== ws)
      ctx.problems.push(
        `${label} integration ${i.slug}: it belongs to ${ctx.wsOf(now) ?? 'the organisation'} on the server and cannot move`,
      );
    if (!now || now.sync_status === 'pending') unsynced.add(i.slug);
    const fields = defined(pick(i, ['name', 'url', 'description', 'configurations', ...family.extraIntegrationFields]));
    const path = `${family.integrationsPath}/${enc(i.slug)}`;
    const changes = now
      ? changedFields(now, fields, {
          configurations: (c, d) => same(c, family.shown(d as Record<string, unknown>)),
        })
      : Object.keys(fields);
    const create = defined({
      slug: i.slug,
      ...fields,
      description: i.description ?? undefined,
      workspace_id: ws ?? undefined,
    });
    steps.push(
      oneStep(kind('integration'), i.slug, now !== undefined, changes, {
        method: now ? 'PUT' : 'POST',
        path: now ? path : family.integrationsPath,
        body: now ? pick(fields, changes) : create,
      }),
    );

    const access = i.workspace_access as { global?: boolean; workspaces?: Record<string, boolean> } | undefined;
    if (access) {
      if (ws !== null)
        ctx.problems.push(
          `${label} integration ${i.slug}: workspace_access: it belongs to workspace ${ws}, which alone may use it`,
        );
      const current = state.access[i.slug] ?? { global_workspace_access: { enabled: false }, data: [] };
      const wanted = Object.entries(access.workspaces ?? {}).map(([slug, enabled]) => ({
        slug: ctx.needWs(`${label} integration ${i.slug}: workspace_access`, slug),
        enabled,
      }));
      const changes = [
        ...(access.global !== undefined && access.global !== current.global_workspace_access.enabled ? ['global'] : []),
        ...wanted
          .filter((w) => {
            const row = current.data.find((d) => d.slug === w.slug);
            return !row?.has_override || row.enabled !== w.enabled;
          })
          .map((w) => `workspaces.${w.slug}`),
      ];
      steps.push(
        oneStep(kind('integration_access'), i.slug, now !== undefined, changes, {
          method: 'PUT',
          path: `${path}/workspaces`,
          body: {
            workspaces: wanted.map((w) => ({ id: w.slug, enabled: w.enabled })),
            ...(access.global !== undefined ? { global_workspace_access: { enabled: access.global } } : {}),
          },
        }),
      );
    }

    const switches = family.switchesOf(i);
    if (switches) {
      const planned = switchStep(
        kind(`integration_${family.switchesPath}`),
        i.slug,
        now !== undefined,
        state.integrationSwitches[i.slug] ?? [],
        switches,
        (items) => ({ method: 'PUT', path: `${path}/${family.switchesPath}`, body: family.switchBody(items) }),
      );
      if (family.syncsInBackground && unsynced.has(i.slug) && planned.request) planned.awaits = `${path}/metadata`;
      steps.push(planned);
    }
  }

  for (const s of servers) {
    const what = `${label} server ${s.slug}`;
    const ws = ctx.needWs(what, s.workspace ?? ctx.defaultWs);
    const integration = s.integration as string;
    if (!inFile.has(integration) && !state.integrations.some((row) => row.slug === integration))
      ctx.problems.push(`${what}: integration ${integration} does not exist and is not in the file`);
    const now = state.servers.find((row) => row.slug === s.slug);
    if (now && now.integration_slug !== integration)
      ctx.problems.push(`${what}: its integration is ${now.integration_slug} on the server and cannot change`);
    if (now && ctx.wsOf(now) !== ws)
      ctx.problems.push(`${what}: it is in ${ctx.wsOf(now)} on the server and cannot move`);
    const fields = defined(pick(s, ['name', 'description', ...family.extraServerFields]));
    const path = `${family.serversPath}/${enc(s.slug)}`;
    const changes = now ? changedFields(now, fields) : Object.keys(fields);
    steps.push(
      oneStep(kind('server'), s.slug, now !== undefined, changes, {
        method: now ? 'PUT' : 'POST',
        path: now ? path : family.serversPath,
        body: now
          ? pick(fields, changes)
          : defined({
              slug: s.slug,
              ...fields,
              description: s.description ?? undefined,
              [family.integrationIdField]: integration,
              workspace_id: ws,
              default_user_access: s.default_user_access,
            }),
      }),
    );

    const switches = family.switchesOf(s);
    if (switches) {
      const planned = switchStep(
        kind(`server_${family.switchesPath}`),
        s.slug,
        now !== undefined,
        state.serverSwitches[s.slug] ?? [],
        switches,
        (items) => ({ method: 'PUT', path: `${path}/${family.switchesPath}`, body: family.switchBody(items) }),
      );
      if (family.syncsInBackground && unsynced.has(integration) && planned.request)
        planned.awaits = `${family.integrationsPath}/${enc(integration)}/metadata`;
      steps.push(planned);
    }

    const access = s.user_access as Array<{ user: string; enabled: boolean }> | undefined;
    // A new server takes its default in the create request.
    const defaultChange = now !== undefined && s.default_user_access !== undefined;
    if (access || defaultChange) {
      const current = state.userAccess[s.slug] ?? { default_user_access: 'allow', data: [] };
      const wanted = (access ?? []).map((entry, n) => {
        const user = users.find((u) => u.id === entry.user || u.email.toLowerCase() === entry.user.toLowerCase());
        if (!user)
          ctx.problems.push(`${what}: user_access[${n}].user: ${entry.user} is not a user of the organisation`);
        return { user_id: user?.id ?? entry.user, enabled: entry.enabled, name: entry.user };
      });
      const changes = [
        ...(defaultChange && current.default_user_access !== s.default_user_access ? ['default_user_access'] : []),
        ...wanted
          .filter((w) => {
            const row = current.data.find((d) => d.user_id === w.user_id);
            return !row?.has_override || row.enabled !== w.enabled;
          })
          .map((w) => `user_access.${w.name}`),
      ];
      steps.push(
        oneStep(kind('server_user_access'), s.slug, now !== undefined, changes, {
          method: 'PUT',
          path: `${path}/user-access`,
          body: defined({
            user_access: wanted.map(({ user_id, enabled }) => ({ user_id, enabled })),
            default_user_access: defaultChange ? s.default_user_access : undefined,
          }),
        }),
      );
    }
  }
  return steps;
}

/** Steps for the MCP and agent sections of the file. */
export function planTools(file: ToolSectionsFile, state: ToolState, ctx: PlanContext): Step[] {
  return [
    ...planToolFamily(MCP, file.mcp_integrations, file.mcp_servers, state.mcp, state.users, ctx),
    ...planToolFamily(AGENT, file.agent_integrations, file.agent_servers, state.agent, state.users, ctx),
  ];
}
