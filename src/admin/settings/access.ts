import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import type { SecuritySettingKey, SecuritySettings } from './schemas.js';

export type ViewArea = 'all_data' | 'analytics' | 'prompts' | 'configs';
export type WriteArea = 'prompts' | 'configs';

const VIEW_KEYS: Record<ViewArea, { member: SecuritySettingKey; manager: SecuritySettingKey }> = {
  all_data: { member: 'membersViewAllData', manager: 'managersViewAllData' },
  analytics: { member: 'membersViewAnalytics', manager: 'managersViewAnalytics' },
  prompts: { member: 'membersViewPrompts', manager: 'managersViewPrompts' },
  configs: { member: 'membersViewConfigs', manager: 'managersViewConfigs' },
};

const WRITE_KEYS: Record<WriteArea, { member: SecuritySettingKey; manager: SecuritySettingKey }> = {
  prompts: { member: 'membersWritePrompts', manager: 'managersWritePrompts' },
  configs: { member: 'membersWriteConfigs', manager: 'managersWriteConfigs' },
};

/**
 * The role the security settings govern: workspace members and managers. Organisation owners
 * and admins always have full access, and so do workspace admins and keys with no workspace
 * role (admin keys, which only owners and admins create).
 */
export function governedRole(principal: Principal): 'member' | 'manager' | null {
  if (isOrgAdmin(principal)) return null;
  return principal.workspaceRole === 'member' || principal.workspaceRole === 'manager' ? principal.workspaceRole : null;
}

/** Whether `settings` (the effective settings of the caller's workspace) let the caller see `area`. */
export function viewAllowed(settings: SecuritySettings, principal: Principal, area: ViewArea): boolean {
  const role = governedRole(principal);
  return role === null || settings[VIEW_KEYS[area][role]] === true;
}

/** Whether `settings` let the caller create and change things of `area`; writing also needs seeing. */
export function writeAllowed(settings: SecuritySettings, principal: Principal, area: WriteArea): boolean {
  const role = governedRole(principal);
  return role === null || (settings[WRITE_KEYS[area][role]] === true && settings[VIEW_KEYS[area][role]] === true);
}
