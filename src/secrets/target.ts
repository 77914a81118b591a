import type { SecretBox } from '../lib/secret-box.js';
import type { SecretReferencesTable } from '../storage/schema.js';
import { AUTH_SCHEMAS, openAuthConfig } from './auth-config.js';
import type { SecretTarget } from './types.js';

/** A stored reference as the backends need it: its auth config decrypted. */
export function targetOf(row: SecretReferencesTable, box: SecretBox): SecretTarget {
  return {
    referenceId: row.id,
    slug: row.slug,
    version: row.last_updated_at,
    managerType: row.manager_type,
    // Validated when stored; parsed again so that a row edited by hand fails here, not in a vendor library.
    auth: AUTH_SCHEMAS[row.manager_type].schema.parse(openAuthConfig(box, row.auth_config)),
    secretPath: row.secret_path,
  };
}

/** Whether a workspace may use the reference (its allowed list, or every workspace). */
export function allowsWorkspace(
  row: Pick<SecretReferencesTable, 'allow_all_workspaces' | 'allowed_workspaces'>,
  workspaceId: string,
): boolean {
  return row.allow_all_workspaces === 1 || (JSON.parse(row.allowed_workspaces) as string[]).includes(workspaceId);
}
