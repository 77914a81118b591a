import type { WorkspaceRole } from './identity.js';

/** A bearer token an identity provider uses on the SCIM routes; only its SHA-256 is stored. */
export interface ScimTokensTable {
  id: string;
  organisation_id: string;
  name: string;
  token_hash: string;
  token_hint: string;
  status: 'active' | 'revoked';
  expires_at: string | null;
  created_by_user_id: string | null;
  created_by_key_id: string | null;
  created_at: string;
  last_updated_at: string;
  revoked_at: string | null;
}

/** A group pushed by the identity provider; its members are in `scim_group_members`. */
export interface ScimGroupsTable {
  id: string;
  organisation_id: string;
  /** Unique per organisation. */
  display_name: string;
  external_id: string | null;
  created_at: string;
  last_updated_at: string;
}

export interface ScimGroupMembersTable {
  group_id: string;
  user_id: string;
  created_at: string;
}

/**
 * Members of a SCIM group become members of a workspace with a role (`/v1/scim/workspaces`).
 * `scim_group_id` is null while the mapping names a group by `scim_group_name` that does not
 * exist yet; it is linked when a group of that name is pushed.
 */
export interface ScimWorkspaceMappingsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  scim_group_id: string | null;
  scim_group_name: string | null;
  role: WorkspaceRole;
  status: 'active' | 'archived';
  created_at: string;
  last_updated_at: string;
}

/** The scim tables, as `Database` (../schema.ts) joins them. */
export interface ScimTables {
  scim_tokens: ScimTokensTable;
  scim_groups: ScimGroupsTable;
  scim_group_members: ScimGroupMembersTable;
  scim_workspace_mappings: ScimWorkspaceMappingsTable;
}
