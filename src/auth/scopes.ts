/**
 * The scope catalogue. Names follow `<resource>.<create|read|list|update|delete>` as users of
 * the established gateway know them, plus a few verbs of their own (`completions.write`,
 * `logs.export`, …). `workspace: false` marks organisation-wide scopes that only admin keys
 * may carry.
 */
export interface ScopeInfo {
  name: string;
  description: string;
  workspace: boolean;
}

const crud = (
  resource: string,
  label: string,
  workspace: boolean,
  verbs = ['create', 'read', 'list', 'update', 'delete'],
): ScopeInfo[] =>
  verbs.map((verb) => ({ name: `${resource}.${verb}`, description: `${capitalise(verb)} ${label}.`, workspace }));

function capitalise(verb: string): string {
  return verb === 'list' ? 'List' : verb.charAt(0).toUpperCase() + verb.slice(1);
}

export const SCOPES: readonly ScopeInfo[] = [
  {
    name: 'completions.write',
    description: 'Call the gateway routes (chat, completions, embeddings, pass-through, …).',
    workspace: true,
  },
  { name: 'organisations.read', description: 'Read organisation details and settings.', workspace: false },
  { name: 'organisations.update', description: 'Change organisation settings.', workspace: false },
  ...crud('organisation_service_api_keys', 'admin (organisation) API keys', false),
  ...crud('workspace_service_api_keys', 'workspace service API keys', true),
  ...crud('workspace_user_api_keys', 'workspace user API keys', true),
  ...crud('organisation_users', 'organisation users', false),
  ...crud('workspaces', 'workspaces', false, ['create', 'list', 'update', 'delete']),
  { name: 'workspaces.read', description: 'Read workspace details (a workspace key reads its own).', workspace: true },
  ...crud('workspace_users', 'workspace members', true),
  ...crud('rate_limits_policies', 'rate-limits policies', true),
  ...crud('usage_limits_policies', 'usage-limits policies', true),
  ...crud('integrations', 'integrations (organisation provider credentials)', false),
  ...crud('providers', 'workspace providers', true),
  ...crud('secret_references', 'secret references (where provider keys live in external secret managers)', false),
  ...crud('virtual_keys', 'virtual keys', true),
  { name: 'virtual_keys.copy', description: 'Copy virtual keys between workspaces.', workspace: true },
  { name: 'virtual_keys.duplicate', description: 'Duplicate virtual keys.', workspace: true },
  ...crud('configs', 'gateway configs', true),
  ...crud('model_aliases', 'model aliases (organisation-wide ones by organisation owners and admins)', true),
  ...crud('prompts', 'prompts', true),
  ...crud('guardrails', 'guardrails', true),
  ...crud('deployments', 'deployments (groups of gateway instances)', false),
  { name: 'logs.list', description: 'List request logs.', workspace: true },
  { name: 'logs.view', description: 'Read one request log with its bodies.', workspace: true },
  {
    name: 'logs.create',
    description: 'Insert request log records of calls made outside the gateway (POST /v1/logs).',
    workspace: true,
  },
  { name: 'logs.export', description: 'Create and download log exports.', workspace: true },
  { name: 'analytics.view', description: 'Read analytics.', workspace: true },
  { name: 'feedback.create', description: 'Create feedback on traces.', workspace: true },
  { name: 'feedback.update', description: 'Update feedback.', workspace: true },
  { name: 'audit_logs.list', description: 'List audit records of administrative actions.', workspace: false },
  ...crud('scim', 'SCIM tokens and SCIM group to workspace mappings', false, ['create', 'list', 'delete']),
  { name: 'mcp.invoke', description: 'Call MCP servers through the gateway.', workspace: true },
  ...crud('mcp_integrations', 'MCP integrations (organisation-wide ones by admin keys)', true),
  ...crud('mcp_servers', 'MCP servers, their capabilities, user access and connections', true),
  ...crud('agent_integrations', 'agent integrations (remote A2A agents; organisation-wide ones by admin keys)', true),
  ...crud('agent_servers', 'agent servers (an agent integration in a workspace), their skills and user access', true),
  {
    name: 'agents.invoke',
    description: 'Call agent servers through the agent gateway (/v1/agents/…).',
    workspace: true,
  },
];

const byName = new Map(SCOPES.map((scope) => [scope.name, scope]));

export const isKnownScope = (name: string): boolean => byName.has(name);
export const scopeInfo = (name: string): ScopeInfo | undefined => byName.get(name);

export const ALL_SCOPES: readonly string[] = SCOPES.map((scope) => scope.name);
export const WORKSPACE_SCOPES: readonly string[] = SCOPES.filter((scope) => scope.workspace).map((scope) => scope.name);

/**
 * Scopes of the data plane (provider traffic). Every other authenticated route is the
 * control plane, which API_ACCESS_ENABLED=OFF turns off as a whole.
 */
export const DATA_PLANE_SCOPES: ReadonlySet<string> = new Set(['completions.write', 'mcp.invoke', 'agents.invoke']);
