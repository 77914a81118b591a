import { generateRawKey, hashKey, keyHint, type ApiKeyVerifier } from '../../auth/api-key-service.js';
import { isOrgAdmin, keyKind, type Principal } from '../../auth/principal.js';
import { isKnownScope, scopeInfo } from '../../auth/scopes.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { ApiKeyRepository, ApiKeyRow } from '../../storage/repositories/api-keys.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import type { ApiKeyType } from '../../storage/schema.js';
import { pageWindow } from '../shared/pagination.js';
import { effectiveWorkspaceRole, resolveWorkspace } from '../shared/workspace-access.js';
import type { ApiKeyObject, CreateApiKeyBody } from './schemas.js';

/**
 * Who may create, see and revoke which keys, after the spec's role table: owners and admins
 * make admin keys and workspace keys anywhere; workspace managers make workspace keys in their
 * own workspace; members make none. No key can grant a scope it does not hold itself.
 */
export function createApiKeyAdminService(deps: { keys: ApiKeyRepository; workspaces: WorkspaceRepository; verifier: ApiKeyVerifier; clock: Clock }) {
  const now = () => new Date(deps.clock.now()).toISOString();

  function checkScopes(principal: Principal, scopes: string[], forWorkspaceKey: boolean): void {
    scopes.forEach((scope, index) => {
      if (!isKnownScope(scope)) throw new AppError('UNKNOWN_SCOPE', `Unknown scope ${scope}; GET /v1/api-keys/scopes lists them.`, { param: `scopes[${index}]` });
      if (forWorkspaceKey && !scopeInfo(scope)?.workspace) throw invalid(`scopes[${index}]`, `Scope ${scope} is organisation-wide and cannot be given to a workspace key.`);
      if (!principal.scopes.has(scope)) throw new AppError('MISSING_SCOPE', `Cannot grant scope ${scope}: this API key does not hold it.`, { param: `scopes[${index}]` });
    });
  }

  function checkExpiry(expiresAt: string | null | undefined): string | null {
    if (expiresAt === undefined || expiresAt === null) return null;
    const at = Date.parse(expiresAt);
    if (at <= deps.clock.now()) throw invalid('expires_at', 'expires_at must be in the future.');
    return new Date(at).toISOString();
  }

  async function insertKey(principal: Principal, fields: Pick<ApiKeyRow, 'type' | 'workspace_id' | 'user_id' | 'name' | 'description' | 'scopes' | 'expires_at' | 'rate_limits' | 'usage_limits'>) {
    const raw = generateRawKey();
    const stamp = now();
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
      ...fields,
    };
    await deps.keys.insert(row);
    return { row, raw };
  }

  async function findVisible(principal: Principal, id: string): Promise<ApiKeyRow> {
    const row = isUuid(id) ? await deps.keys.findById(principal.organisationId, id) : undefined;
    if (!row || row.status === 'revoked') throw notFound('API key');
    if (principal.workspaceId !== null && row.workspace_id !== principal.workspaceId) throw new AppError('WORKSPACE_FORBIDDEN', 'This workspace key cannot reach keys of another workspace.');
    return row;
  }

  return {
    async createAdminKey(principal: Principal, body: CreateApiKeyBody) {
      if (!isOrgAdmin(principal)) throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins create admin keys.');
      if (body.workspace_id !== undefined) throw invalid('workspace_id', 'Admin keys belong to the organisation; leave workspace_id out.');
      if (body.organisation_id !== undefined && body.organisation_id !== principal.organisationId) throw new AppError('WORKSPACE_FORBIDDEN', 'organisation_id is not the organisation of this API key.', { param: 'organisation_id' });
      checkScopes(principal, body.scopes, false);
      return insertKey(principal, {
        type: 'organisation-service',
        workspace_id: null,
        user_id: principal.userId,
        name: body.name,
        description: body.description ?? null,
        scopes: JSON.stringify(body.scopes),
        expires_at: checkExpiry(body.expires_at),
        ...limitsOf(body),
      });
    },

    async createWorkspaceKey(principal: Principal, type: Extract<ApiKeyType, 'workspace-user' | 'workspace-service'>, body: CreateApiKeyBody) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, body.workspace_id, { required: true });
      if (!workspace) throw invalid('workspace_id', 'workspace_id is required.');
      if (workspace.status !== 'active') throw invalid('workspace_id', 'The workspace is archived.');
      const role = effectiveWorkspaceRole(principal, workspace.id);
      if (role !== 'admin' && role !== 'manager') throw new AppError('ROLE_NOT_ALLOWED', 'Only workspace managers and organisation admins create workspace keys.');
      checkScopes(principal, body.scopes, true);
      let userId = principal.userId;
      if (body.user_id !== undefined && body.user_id !== principal.userId) {
        if (type !== 'workspace-user') throw invalid('user_id', 'user_id applies only to workspace user keys.');
        if (!(await deps.workspaces.findMember(workspace.id, body.user_id))) throw new AppError('NOT_FOUND', 'That user is not a member of the workspace.', { param: 'user_id' });
        userId = body.user_id;
      }
      return insertKey(principal, {
        type,
        workspace_id: workspace.id,
        user_id: userId,
        name: body.name,
        description: body.description ?? null,
        scopes: JSON.stringify(body.scopes),
        expires_at: checkExpiry(body.expires_at),
        ...limitsOf(body),
      });
    },

    async list(principal: Principal, query: { workspace_id?: string | undefined; page_size: number; current_page: number }) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const { total, rows } = await deps.keys.list({ organisationId: principal.organisationId, ...(workspace ? { workspaceId: workspace.id } : {}), ...pageWindow(query) });
      return { total, data: rows.map(toObject) };
    },

    get: async (principal: Principal, id: string) => toObject(await findVisible(principal, id)),

    /** Revokes at once: the key stops working on this instance before the response is sent. */
    async revoke(principal: Principal, id: string): Promise<ApiKeyRow> {
      const row = await findVisible(principal, id);
      if (row.type === 'organisation-service' && keyKind(principal) !== 'admin') throw new AppError('KEY_TYPE_NOT_ALLOWED', 'Only admin keys revoke admin keys.');
      if (row.workspace_id !== null) {
        const role = effectiveWorkspaceRole(principal, row.workspace_id);
        const ownKey = row.user_id !== null && row.user_id === principal.userId;
        if (role !== 'admin' && role !== 'manager' && !ownKey) throw new AppError('ROLE_NOT_ALLOWED', 'Only workspace managers revoke other users’ keys.');
      } else if (!isOrgAdmin(principal)) {
        throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins revoke admin keys.');
      }
      await deps.keys.update(row.id, { status: 'revoked', last_updated_at: now() });
      deps.verifier.invalidate(row.id);
      return row;
    },
  };
}

export type ApiKeyAdminService = ReturnType<typeof createApiKeyAdminService>;

const limitsOf = (body: CreateApiKeyBody) => ({
  rate_limits: body.rate_limits ? JSON.stringify(body.rate_limits) : null,
  usage_limits: body.usage_limits ? JSON.stringify(body.usage_limits) : null,
});

function toObject(row: ApiKeyRow): ApiKeyObject {
  return {
    id: row.id,
    key: row.key_hint,
    name: row.name,
    description: row.description,
    type: row.type,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    user_id: row.user_id,
    status: row.status,
    scopes: JSON.parse(row.scopes) as string[],
    creation_mode: row.creation_mode,
    expires_at: row.expires_at,
    rate_limits: row.rate_limits === null ? null : (JSON.parse(row.rate_limits) as ApiKeyObject['rate_limits']),
    usage_limits: row.usage_limits === null ? null : (JSON.parse(row.usage_limits) as ApiKeyObject['usage_limits']),
    last_reset_at: null,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'api-key',
  };
}
