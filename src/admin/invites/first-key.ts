import { ALL_SCOPES, isKnownScope, WORKSPACE_SCOPES } from '../../auth/scopes.js';
import type { OrgRole, WorkspaceRole } from '../../storage/schema.js';

/** What a workspace member's first key may do: call the gateway and read their workspace. */
const MEMBER_SCOPES = [
  'completions.write',
  'mcp.invoke',
  'agents.invoke',
  'agent_servers.list',
  'agent_servers.read',
  'workspaces.read',
  'workspace_users.list',
  'workspace_users.read',
  'logs.list',
  'logs.view',
  'analytics.view',
  'configs.list',
  'configs.read',
  'prompts.list',
  'prompts.read',
  'guardrails.list',
  'guardrails.read',
  'providers.list',
  'providers.read',
  'virtual_keys.list',
  'virtual_keys.read',
  'rate_limits_policies.list',
  'rate_limits_policies.read',
  'usage_limits_policies.list',
  'usage_limits_policies.read',
  'feedback.create',
  'feedback.update',
  'mcp_integrations.list',
  'mcp_integrations.read',
  'mcp_servers.list',
  'mcp_servers.read',
].filter(isKnownScope);

/**
 * The scopes a member's role gives them inside a workspace (the members API's `scopes`): every
 * workspace scope for organisation owners and admins and for workspace managers and admins, the
 * member scopes for members.
 */
export function memberScopes(orgRole: OrgRole, workspaceRole: WorkspaceRole): string[] {
  if (orgRole === 'owner' || orgRole === 'admin' || workspaceRole !== 'member') return [...WORKSPACE_SCOPES];
  return [...MEMBER_SCOPES];
}

/**
 * The scopes of the key a new user receives on accepting an invite — there is no login UI, so
 * that key is how they start. It follows their role: organisation admins get an admin key with
 * every scope (as the bootstrap owner has); workspace managers and admins a workspace key with
 * every workspace scope; members a workspace key that calls the gateway and reads. Roles still
 * apply on top of scopes, and a manager can give them narrower keys afterwards.
 */
export function firstKeyScopes(orgRole: Exclude<OrgRole, 'owner'>, workspaceRole: WorkspaceRole | null): string[] {
  if (orgRole === 'admin') return [...ALL_SCOPES];
  return workspaceRole === 'member' || workspaceRole === null ? [...MEMBER_SCOPES] : [...WORKSPACE_SCOPES];
}
