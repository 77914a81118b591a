/**
 * A remote A2A agent (docs/agents.md): where its card is (`url`), where its JSON-RPC endpoint is
 * (`rpc_url` when set, else the one its card names, `card_rpc_url`), and how to authenticate to
 * it (`encrypted_auth`: a secret-box value of {headers} or {token}). Owned by the organisation
 * (`workspace_id` null) or one workspace. The sync columns say what the last card read found.
 */
export interface AgentIntegrationsTable {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  slug: string;
  name: string;
  description: string | null;
  url: string;
  rpc_url: string | null;
  auth_type: 'none' | 'headers' | 'bearer';
  encrypted_auth: string | null;
  /** 1: every workspace of the organisation may use it, unless disabled in agent_integration_workspaces. */
  global_workspace_access: number;
  status: 'active' | 'archived';
  owner_id: string;
  updated_by: string | null;
  created_at: string;
  last_updated_at: string;
  sync_status: 'never' | 'ok' | 'error';
  sync_error: string | null;
  last_synced_at: string | null;
  /** The card as last read (JSON text, in the A2A 1.0 shape). */
  card: string | null;
  card_rpc_url: string | null;
  agent_name: string | null;
  agent_version: string | null;
  protocol_version: string | null;
}

export interface AgentIntegrationWorkspacesTable {
  integration_id: string;
  workspace_id: string;
  enabled: number;
}

/** One skill of an integration's card; `details` is JSON {tags, examples, input_modes, output_modes}. */
export interface AgentSkillsTable {
  integration_id: string;
  skill_id: string;
  position: number;
  name: string;
  description: string | null;
  details: string;
  enabled: number;
}

/** An agent integration's instance in one workspace, served by the gateway at /v1/agents/{slug}. */
export interface AgentServersTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  integration_id: string;
  slug: string;
  name: string;
  description: string | null;
  status: 'active' | 'archived';
  default_user_access: 'allow' | 'deny';
  owner_id: string;
  updated_by: string | null;
  created_at: string;
  last_updated_at: string;
}

/** A server's own switch for one skill; no row means enabled. */
export interface AgentServerSkillsTable {
  server_id: string;
  skill_id: string;
  enabled: number;
}

/** A user's override of a server's default_user_access. */
export interface AgentServerUsersTable {
  server_id: string;
  user_id: string;
  enabled: number;
}

/** The agents tables, as `Database` (../schema.ts) joins them. */
export interface AgentsTables {
  agent_integrations: AgentIntegrationsTable;
  agent_integration_workspaces: AgentIntegrationWorkspacesTable;
  agent_skills: AgentSkillsTable;
  agent_servers: AgentServersTable;
  agent_server_skills: AgentServerSkillsTable;
  agent_server_users: AgentServerUsersTable;
}
