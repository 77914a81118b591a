import type { OrgRole, WorkspaceRole } from '../../storage/schema.js';

const RANK: Record<WorkspaceRole, number> = { member: 0, manager: 1, admin: 2 };

/** Whether `role` is at most `ceiling` (member < manager < admin). */
export const roleWithin = (role: WorkspaceRole, ceiling: WorkspaceRole): boolean => RANK[role] <= RANK[ceiling];

/** Workspace managers and admins manage members; members do not. */
export const managesMembers = (role: WorkspaceRole | null): role is WorkspaceRole =>
  role === 'manager' || role === 'admin';

/** What a user can do in a workspace: organisation owners and admins act as workspace admins everywhere. */
export const memberStanding = (orgRole: OrgRole, role: WorkspaceRole): WorkspaceRole =>
  orgRole === 'owner' || orgRole === 'admin' ? 'admin' : role;
