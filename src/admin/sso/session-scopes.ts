import { ALL_SCOPES } from '../../auth/scopes.js';
import type { OrgRole, WorkspaceRole } from '../../storage/schema.js';
import { firstKeyScopes } from '../invites/first-key.js';

/**
 * What a session may do: what the user's first API key could (owners and admins everything,
 * workspace managers and admins every workspace scope, members call the gateway and read).
 * The gateway scopes are among them, because a key can only grant scopes its creator holds:
 * signed in, a manager makes the API keys their tools use. Roles still apply on top, as for keys.
 */
export function sessionScopes(orgRole: OrgRole, workspaceRole: WorkspaceRole | null): readonly string[] {
  return orgRole === 'owner' ? ALL_SCOPES : firstKeyScopes(orgRole, workspaceRole);
}
