import { generateRawKey, hashKey, keyHint } from '../../auth/api-key-service.js';
import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import { AppError, invalid } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ApiKeyRow } from '../../storage/repositories/api-keys.js';
import type { ApiKeyType } from '../../storage/schema.js';
import { effectiveWorkspaceRole, resolveWorkspace } from '../shared/workspace-access.js';
import { storedDefaults } from './key-defaults.js';
import { checkExpiry, checkScopes, limitsOf } from './key-fields.js';
import { rotationFields } from './rotation-policy.js';
import type { CreateApiKeyBody } from './schemas.js';
import { isoNow, type ApiKeyAdminDeps } from './service-deps.js';

/** What a request chooses about a new key; the rest (id, secret, status, stamps) is set here. */
type ChosenFields = Pick<
  ApiKeyRow,
  | 'type'
  | 'workspace_id'
  | 'user_id'
  | 'name'
  | 'description'
  | 'scopes'
  | 'expires_at'
  | 'rate_limits'
  | 'usage_limits'
  | 'rotation_policy'
  | 'next_rotation_at'
  | 'defaults'
  | 'alert_emails'
>;

/**
 * Creating keys: owners and admins make admin keys, and workspace keys anywhere; workspace
 * managers make workspace keys in their own workspace. The raw key is returned once, only its
 * hash is stored.
 */
export function createApiKeyCreation(
  deps: Pick<ApiKeyAdminDeps, 'keys' | 'configs' | 'workspaces' | 'clock' | 'secretReferences' | 'checkUserKeyPolicy'>,
) {
  async function insertKey(principal: Principal, fields: ChosenFields) {
    const raw = generateRawKey();
    const stamp = isoNow(deps.clock);
    const row: ApiKeyRow = {
      id: newId(),
      organisation_id: principal.organisationId,
      key_hash: hashKey(raw),
      key_hint: keyHint(raw),
      status: 'active',
      creation_mode: 'api',
      created_by_key_id: principal.keyId,
      created_at: stamp,
      last_updated_at: stamp,
      previous_key_hash: null,
      previous_key_expires_at: null,
      last_rotated_at: null,
      new_key_pending_since: null,
      ...fields,
    };
    await deps.keys.insert(row);
    return { row, raw };
  }

  return {
    async createAdminKey(principal: Principal, body: CreateApiKeyBody) {
      if (!isOrgAdmin(principal))
        throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins create admin keys.');
      if (body.workspace_id !== undefined)
        throw invalid('workspace_id', 'Admin keys belong to the organisation; leave workspace_id out.');
      if (body.organisation_id !== undefined && body.organisation_id !== principal.organisationId)
        throw new AppError('WORKSPACE_FORBIDDEN', 'organisation_id is not the organisation of this API key.', {
          param: 'organisation_id',
        });
      checkScopes(principal, body.scopes, false);
      return insertKey(principal, {
        type: 'organisation-service',
        workspace_id: null,
        user_id: principal.userId,
        name: body.name,
        description: body.description ?? null,
        scopes: JSON.stringify(body.scopes),
        expires_at: checkExpiry(body.expires_at, deps.clock.now()),
        ...limitsOf(body, deps.clock.now()),
        ...(await rotationFields(deps, principal, null, body.rotation_policy)),
        defaults: await storedDefaults(deps.configs, principal, null, body.defaults),
      });
    },

    async createWorkspaceKey(
      principal: Principal,
      type: Extract<ApiKeyType, 'workspace-user' | 'workspace-service'>,
      body: CreateApiKeyBody,
    ) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, body.workspace_id, { required: true });
      if (!workspace) throw invalid('workspace_id', 'workspace_id is required.');
      if (workspace.status !== 'active') throw invalid('workspace_id', 'The workspace is archived.');
      const role = effectiveWorkspaceRole(principal, workspace.id);
      if (role !== 'admin' && role !== 'manager')
        throw new AppError(
          'ROLE_NOT_ALLOWED',
          'Only workspace managers and organisation admins create workspace keys.',
        );
      checkScopes(principal, body.scopes, true);
      let userId = principal.userId;
      if (body.user_id !== undefined && body.user_id !== principal.userId) {
        if (type !== 'workspace-user') throw invalid('user_id', 'user_id applies only to workspace user keys.');
        if (!(await deps.workspaces.findMember(workspace.id, body.user_id)))
          throw new AppError('NOT_FOUND', 'That user is not a member of the workspace.', { param: 'user_id' });
        userId = body.user_id;
      }
      const expiresAt = checkExpiry(body.expires_at, deps.clock.now());
      return insertKey(principal, {
        type,
        workspace_id: workspace.id,
        user_id: userId,
        name: body.name,
        description: body.description ?? null,
        scopes: JSON.stringify(body.scopes),
        expires_at:
          type === 'workspace-user' && userId !== null
            ? (
                await deps.checkUserKeyPolicy({
                  organisationId: principal.organisationId,
                  workspaceId: workspace.id,
                  userId,
                  expiresAt,
                })
              ).expiresAt
            : expiresAt,
        ...limitsOf(body, deps.clock.now()),
        ...(await rotationFields(deps, principal, workspace.id, body.rotation_policy)),
        defaults: await storedDefaults(deps.configs, principal, workspace.id, body.defaults),
      });
    },
  };
}
