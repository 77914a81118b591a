/** The shapes an apply plan is made of: steps, and resources as the admin API lists them. */

export type Kind =
  | 'workspace'
  | 'integration'
  | 'integration_models'
  | 'provider'
  | 'guardrail'
  | 'config'
  | 'deployment'
  | 'alias'
  | 'rate_limits_policy'
  | 'usage_limits_policy'
  | 'api_key'
  | 'prompt_label'
  | 'prompt_collection'
  | 'prompt_partial'
  | 'prompt'
  | 'secret_reference'
  | 'mcp_integration'
  | 'mcp_integration_access'
  | 'mcp_integration_capabilities'
  | 'mcp_server'
  | 'mcp_server_capabilities'
  | 'mcp_server_user_access'
  | 'agent_integration'
  | 'agent_integration_access'
  | 'agent_integration_skills'
  | 'agent_server'
  | 'agent_server_skills'
  | 'agent_server_user_access';
export type Action = 'create' | 'update' | 'unchanged';

export interface Request {
  method: 'POST' | 'PUT';
  path: string;
  body: Record<string, unknown>;
}

export interface Step {
  kind: Kind;
  /** How the file names it: a slug, or `workspace/name`. */
  name: string;
  action: Action;
  /** Fields that differ (update), or those given (create). */
  changes: string[];
  request?: Request;
  /** A second request, sent once `request` succeeded (a config declared archived is created, then archived). */
  then?: Request;
  /**
   * A path whose `sync_status` must leave `pending` before `request` is sent: switches on MCP
   * capabilities exist once the integration's background sync has listed them. A dry run, which
   * cannot sync an integration it rolls back, leaves such a step out.
   */
  awaits?: string;
}

/**
 * A resource as the admin API lists it: the fields the plan reads by name, and the others, which
 * it only compares with the file's (`changedFields`).
 */
export interface Resource {
  id: string;
  [field: string]: unknown;
}

export interface WorkspaceRow extends Resource {
  slug: string;
  status?: string;
  is_default?: boolean;
}

export interface IntegrationRow extends Resource {
  slug: string;
  ai_provider_id: string;
  masked_key?: string | null;
}

export interface ProviderRow extends Resource {
  slug: string;
  workspace_id: string | null;
  integration_id: string;
}

export interface ConfigRow extends Resource {
  slug: string;
  name: string;
  status: string;
  workspace_id: string | null;
  last_updated_at?: string;
  /** The latest version's object: only on configs fetched one by one. */
  config?: unknown;
}

export interface DeploymentRow extends Resource {
  slug: string;
  config_slug: string | null;
  allowed_workspaces: Array<{ id: string; slug: string }> | null;
}

export interface PolicyRow extends Resource {
  name: string | null;
  workspace_id: string | null;
  type: string;
}

export interface ApiKeyRow extends Resource {
  name: string;
  type: string;
  status: string;
  workspace_id: string | null;
}

/** What exists on the server now (active resources, and archived workspaces). */
