import type { Client } from '../client/http-client.js';
import {
  AGENT,
  MCP,
  type Family,
  type FamilyState,
  type Switch,
  type ToolIntegrationRow,
  type ToolServerRow,
  type ToolState,
  type UserAccessRow,
  type WorkspaceAccessRow,
} from './plan-tools.js';
import type { ToolSectionsFile } from './tools-schema.js';

const enc = encodeURIComponent;

type Lister = <T extends { id: string }>(path: string, query?: Record<string, string>) => Promise<T[]>;
type Entry = { slug: string; workspace_access?: unknown; capabilities?: unknown; skills?: unknown };
type ServerEntry = Entry & { user_access?: unknown; default_user_access?: unknown };

/** Every page of a switch list: MCP capabilities (1-based `page`, `has_more`) or skills (`current_page`). */
async function switches(client: Client, family: Family, path: string): Promise<Switch[]> {
  const out: Switch[] = [];
  for (let page = 0; ; page++) {
    const body = await client.get<{
      data: Array<{ id?: string; name?: string; type?: string; enabled: boolean }>;
      has_more?: boolean;
      total: number;
    }>(path, family === MCP ? { page: page + 1, page_size: 500 } : { current_page: page, page_size: 1000 });
    out.push(...body.data.map((s) => ({ key: family === MCP ? `${s.type}:${s.name}` : s.id!, enabled: s.enabled })));
    if (body.data.length === 0 || (family === MCP ? !body.has_more : out.length >= body.total)) return out;
  }
}

async function userAccess(client: Client, path: string): Promise<UserAccessRow> {
  const first = await client.get<UserAccessRow & { total: number }>(path, { current_page: 0, page_size: 500 });
  const data = [...first.data];
  for (let page = 1; data.length < first.total; page++) {
    const next = await client.get<UserAccessRow>(path, { current_page: page, page_size: 500 });
    if (next.data.length === 0) break;
    data.push(...next.data);
  }
  return { default_user_access: first.default_user_access, data };
}

async function familyState(
  client: Client,
  listAll: Lister,
  family: Family,
  integrations: readonly Entry[],
  servers: readonly ServerEntry[],
): Promise<FamilyState> {
  const empty: FamilyState = {
    integrations: [],
    access: {},
    integrationSwitches: {},
    servers: [],
    serverSwitches: {},
    userAccess: {},
  };
  if (integrations.length + servers.length === 0) return empty;
  const [integrationRows, serverRows] = await Promise.all([
    listAll<ToolIntegrationRow>(family.integrationsPath, { status: 'active' }),
    servers.length > 0 ? listAll<ToolServerRow>(family.serversPath, { status: 'active' }) : [],
  ]);
  const state = { ...empty, integrations: integrationRows };
  const exists = (slug: string) => integrationRows.some((row) => row.slug === slug);
  for (const i of integrations.filter((entry) => exists(entry.slug))) {
    const path = `${family.integrationsPath}/${enc(i.slug)}`;
    if (i.workspace_access !== undefined)
      state.access[i.slug] = await client.get<WorkspaceAccessRow>(`${path}/workspaces`);
    if (i.capabilities !== undefined || i.skills !== undefined)
      state.integrationSwitches[i.slug] = await switches(client, family, `${path}/${family.switchesPath}`);
  }
  for (const s of servers) {
    const row = serverRows.find((r) => r.slug === s.slug);
    if (!row) continue;
    const path = `${family.serversPath}/${enc(s.slug)}`;
    // The list leaves out what the detail has (guardrails, default user access).
    const detail = await client.get<Record<string, unknown>>(path);
    const listed = row as Record<string, unknown>;
    state.servers.push({
      ...listed,
      ...detail,
      id: row.id,
      slug: row.slug,
      workspace_id: String(listed.workspace_id),
      integration_slug: String(listed[`${family.prefix}_integration_slug`]),
    });
    if (s.capabilities !== undefined || s.skills !== undefined)
      state.serverSwitches[s.slug] = await switches(client, family, `${path}/${family.switchesPath}`);
    if (s.user_access !== undefined || s.default_user_access !== undefined)
      state.userAccess[s.slug] = await userAccess(client, `${path}/user-access`);
  }
  return state;
}

/** What the MCP and agent sections need of the server; nothing is read for sections the file leaves out. */
export async function fetchToolState(client: Client, file: ToolSectionsFile, listAll: Lister): Promise<ToolState> {
  const namesUsers = [...file.mcp_servers, ...file.agent_servers].some((s) => (s.user_access ?? []).length > 0);
  const [mcp, agent, users] = await Promise.all([
    familyState(client, listAll, MCP, file.mcp_integrations, file.mcp_servers),
    familyState(client, listAll, AGENT, file.agent_integrations, file.agent_servers),
    namesUsers ? listAll<{ id: string; email: string }>('/v1/users') : [],
  ]);
  return { mcp, agent, users };
}
