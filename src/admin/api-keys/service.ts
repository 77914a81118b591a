import {
  generateRawKey,
  hashKey,
  keyHint,
  MIN_TRANSITION_MS,
  nextRotationAfter,
  parseRotationPolicy,
  type ApiKeyVerifier,
  type StoredRotationPolicy,
} from '../../auth/api-key-service.js';
import { isOrgAdmin, keyKind, type Principal } from '../../auth/principal.js';
import { isKnownScope, scopeInfo } from '../../auth/scopes.js';
import { updatedUsageLimits, withResetSchedule } from '../../limits/schemas.js';
import type { UsageCounterRepository } from '../../storage/repositories/usage-counters.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { ApiKeyRepository, ApiKeyRow } from '../../storage/repositories/api-keys.js';
import type { ConfigRepository } from '../../storage/repositories/configs.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import type { ApiKeyType } from '../../storage/schema.js';
import type { CheckUserKeyPolicy } from '../settings/security-settings.js';
import type { SecretReferenceRepository } from '../../storage/repositories/secret-references.js';
import type { RotationWriter } from '../../secrets/rotation-writer.js';
import { allowsWorkspace } from '../../secrets/target.js';
import { rotateThroughSecretManager, rotationTargetOf } from '../../auth/vault-rotation.js';
import { pageWindow } from '../shared/pagination.js';
import { effectiveWorkspaceRole, resolveWorkspace } from '../shared/workspace-access.js';
import { createLockoutGuard } from './lockout-guard.js';
import type {
  ApiKeyObject,
  CreateApiKeyBody,
  KeyDefaultsInput,
  RotateApiKeyBody,
  RotationPolicyInput,
  UpdateApiKeyBody,
} from './schemas.js';

/**
 * Who may create, see and revoke which keys, after the spec's role table: owners and admins
 * make admin keys and workspace keys anywhere; workspace managers make workspace keys in their
 * own workspace; members make none. No key can grant a scope it does not hold itself.
 */
export function createApiKeyAdminService(deps: {
  checkUserKeyPolicy: CheckUserKeyPolicy;
  keys: ApiKeyRepository;
  configs: ConfigRepository;
  workspaces: WorkspaceRepository;
  usage: UsageCounterRepository;
  verifier: ApiKeyVerifier;
  clock: Clock;
  secretReferences: SecretReferenceRepository;
  rotationWriter: RotationWriter;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const lockout = createLockoutGuard(deps.keys, now);

  function checkScopes(principal: Principal, scopes: string[], forWorkspaceKey: boolean): void {
    scopes.forEach((scope, index) => {
      if (!isKnownScope(scope))
        throw new AppError('UNKNOWN_SCOPE', `Unknown scope ${scope}; GET /v1/api-keys/scopes lists them.`, {
          param: `scopes[${index}]`,
        });
      if (forWorkspaceKey && !scopeInfo(scope)?.workspace)
        throw invalid(
          `scopes[${index}]`,
          `Scope ${scope} is organisation-wide and cannot be given to a workspace key.`,
        );
      if (!principal.scopes.has(scope))
        throw new AppError('MISSING_SCOPE', `Cannot grant scope ${scope}: this API key does not hold it.`, {
          param: `scopes[${index}]`,
        });
    });
  }

  function checkExpiry(expiresAt: string | null | undefined): string | null {
    if (expiresAt === undefined || expiresAt === null) return null;
    const at = Date.parse(expiresAt);
    if (at <= deps.clock.now()) throw invalid('expires_at', 'expires_at must be in the future.');
    return new Date(at).toISOString();
  }

  /** The stored policy and its first due time: `next_rotation_at` as given, else one period from now. */
  async function rotationFields(
    principal: Principal,
    keyWorkspaceId: string | null,
    input: RotationPolicyInput | null | undefined,
    keyId: string | null = null,
  ): Promise<Pick<ApiKeyRow, 'rotation_policy' | 'next_rotation_at'>> {
    if (!input) return { rotation_policy: null, next_rotation_at: null };
    const at = input.next_rotation_at
      ? Date.parse(input.next_rotation_at)
      : nextRotationAfter(deps.clock.now(), input.rotation_period!);
    if (at <= deps.clock.now())
      throw invalid('rotation_policy.next_rotation_at', 'next_rotation_at must be in the future.');
    const stored: StoredRotationPolicy = {
      rotation_period: input.rotation_period ?? null,
      key_transition_period_ms: input.key_transition_period_ms ?? MIN_TRANSITION_MS,
    };
    if (input.secret_reference_id) {
      stored.secret_reference_id = await rotationReference(principal, keyWorkspaceId, input.secret_reference_id, keyId);
      stored.secret_key = input.secret_key ?? null;
    } else if (input.secret_key) {
      throw invalid('rotation_policy.secret_key', 'secret_key needs secret_reference_id.');
    }
    return { rotation_policy: JSON.stringify(stored), next_rotation_at: new Date(at).toISOString() };
  }

  /**
   * The id of a secret reference a rotation may write to: an active one, named by an
   * organisation owner or admin (writing overwrites the secret), that allows the key's
   * workspace and that no provider credential and no other key's rotation uses.
   */
  async function rotationReference(
    principal: Principal,
    keyWorkspaceId: string | null,
    idOrSlug: string,
    keyId: string | null,
  ): Promise<string> {
    const param = 'rotation_policy.secret_reference_id';
    if (!isOrgAdmin(principal))
      throw new AppError(
        'ROLE_NOT_ALLOWED',
        'Only organisation owners and admins may send rotated keys to a secret reference.',
        { param },
      );
    const row = await deps.secretReferences.findByIdOrSlug(principal.organisationId, idOrSlug);
    if (!row || row.status !== 'active')
      throw new AppError('NOT_FOUND', `Secret reference ${idOrSlug} not found (or deleted).`, { param });
    if (keyWorkspaceId !== null && !allowsWorkspace(row, keyWorkspaceId))
      throw new AppError(
        'SECRET_REFERENCE_FORBIDDEN',
        `Secret reference ${row.slug} does not allow this key's workspace (see its allowed_workspaces).`,
        { param },
      );
    const other = (await deps.secretReferences.findUses(principal.organisationId, row.id)).find(
      (use) => use.id !== keyId,
    );
    if (other)
      throw invalid(
        param,
        other.kind === 'api_key'
          ? `Secret reference ${row.slug} already receives the rotated key of API key "${other.slug}".`
          : `Secret reference ${row.slug} holds a credential of ${other.kind === 'integration' ? 'integration' : other.kind === 'mcp_integration' ? 'MCP integration' : 'virtual key'} ${other.slug}; a rotation would overwrite it.`,
      );
    return row.id;
  }

  /**
   * The stored defaults: the config is named by slug or id and kept as its id, after checking it
   * is active and one the key may use (a workspace key: a config of its own workspace).
   */
  async function defaultsOf(
    principal: Principal,
    keyWorkspaceId: string | null,
    input: KeyDefaultsInput | null | undefined,
  ): Promise<string | null> {
    if (!input) return null;
    let configId: string | null = null;
    if (input.config_id) {
      const config = isUuid(input.config_id)
        ? await deps.configs.findById(principal.organisationId, input.config_id.toLowerCase())
        : await deps.configs.findActiveBySlug(principal.organisationId, input.config_id);
      if (!config || config.status !== 'active')
        throw new AppError('NOT_FOUND', `No active config ${input.config_id}.`, { param: 'defaults.config_id' });
      if (keyWorkspaceId !== null && config.workspace_id !== keyWorkspaceId)
        throw new AppError(
          'WORKSPACE_FORBIDDEN',
          'A workspace key can only default to a config of its own workspace.',
          { param: 'defaults.config_id' },
        );
      configId = config.id;
    }
    return JSON.stringify({
      metadata: input.metadata ?? {},
      config_id: configId,
      allow_config_override: input.allow_config_override ?? true,
      allowed_models: input.allowed_models ?? null,
    });
  }

  async function insertKey(
    principal: Principal,
    fields: Pick<
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
    >,
  ) {
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
      previous_key_hash: null,
      previous_key_expires_at: null,
      last_rotated_at: null,
      new_key_pending_since: null,
      ...fields,
    };
    await deps.keys.insert(row);
    return { row, raw };
  }

  async function findVisible(principal: Principal, id: string): Promise<ApiKeyRow> {
    const row = isUuid(id) ? await deps.keys.findById(principal.organisationId, id) : undefined;
    if (!row || row.status === 'revoked') throw notFound('API key');
    if (principal.workspaceId !== null && row.workspace_id !== principal.workspaceId)
      throw new AppError('WORKSPACE_FORBIDDEN', 'This workspace key cannot reach keys of another workspace.');
    return row;
  }

  /** A key the caller may change or revoke: admin keys by owners and admins, workspace keys by their managers or owner. */
  async function findManageable(principal: Principal, id: string): Promise<ApiKeyRow> {
    const row = await findVisible(principal, id);
    if (row.type === 'organisation-service' && keyKind(principal) !== 'admin')
      throw new AppError('KEY_TYPE_NOT_ALLOWED', 'Only admin keys manage admin keys.');
    if (row.workspace_id !== null) {
      const role = effectiveWorkspaceRole(principal, row.workspace_id);
      const ownKey = row.user_id !== null && row.user_id === principal.userId;
      if (role !== 'admin' && role !== 'manager' && !ownKey)
        throw new AppError('ROLE_NOT_ALLOWED', 'Only workspace managers manage other users’ keys.');
    } else if (!isOrgAdmin(principal)) {
      throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins manage admin keys.');
    }
    return row;
  }

  /** The key object with `usage_limits.current_usage` of the current period. */
  async function withUsage(row: ApiKeyRow): Promise<ApiKeyObject> {
    const object = toObject(row, deps.clock.now());
    if (!object.usage_limits) return object;
    const limits = object.usage_limits as { last_reset_at?: string | null };
    const usage = await deps.usage.currentUsage('api_key', row.id, '', limits.last_reset_at ?? row.created_at);
    return { ...object, usage_limits: { ...object.usage_limits, current_usage: usage } };
  }

  /**
   * A manual rotation of a key whose policy names a secret reference: the new key goes to the
   * reference too (see auth/vault-rotation.ts for the order), so that its readers keep a valid
   * key. A failed write changes nothing and is a 502.
   */
  async function rotateIntoSecretManager(
    row: ApiKeyRow,
    target: NonNullable<ReturnType<typeof rotationTargetOf>>,
    at: number,
    body: RotateApiKeyBody | null | undefined,
  ) {
    const policy = parseRotationPolicy(row.rotation_policy)!;
    const transitionMs = body?.key_transition_period_ms ?? policy.key_transition_period_ms;
    const result = await rotateThroughSecretManager(
      { keys: deps.keys, writer: deps.rotationWriter, verifier: deps.verifier },
      row,
      {
        target,
        now: at,
        transitionMs,
        guard: { key_hash: row.key_hash },
        done: {
          next_rotation_at: policy.rotation_period
            ? new Date(nextRotationAfter(at, policy.rotation_period)).toISOString()
            : null,
        },
      },
    );
    if (!result.ok && result.reason === 'conflict')
      throw new AppError(
        'CONFLICT',
        'The API key was rotated at the same moment by another request; read it again and retry.',
      );
    if (!result.ok)
      throw new AppError(
        'SECRET_MANAGER_ERROR',
        `The new key could not be written to the secret reference of the rotation policy, so the key was not rotated: ${result.error instanceof Error ? result.error.message : String(result.error)}`,
        { cause: result.error },
      );
    const fresh = (await deps.keys.findById(row.organisation_id, row.id))!;
    return { row: fresh, raw: result.raw, transitionExpiresAt: fresh.previous_key_expires_at! };
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
        expires_at: checkExpiry(body.expires_at),
        ...limitsOf(body, deps.clock.now()),
        ...(await rotationFields(principal, null, body.rotation_policy)),
        defaults: await defaultsOf(principal, null, body.defaults),
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
      const expiresAt = checkExpiry(body.expires_at);
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
        ...(await rotationFields(principal, workspace.id, body.rotation_policy)),
        defaults: await defaultsOf(principal, workspace.id, body.defaults),
      });
    },

    async list(
      principal: Principal,
      query: { workspace_id?: string | undefined; page_size: number; current_page: number },
    ) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const { total, rows } = await deps.keys.list({
        organisationId: principal.organisationId,
        ...(workspace ? { workspaceId: workspace.id } : {}),
        ...pageWindow(query),
      });
      return { total, data: await Promise.all(rows.map(withUsage)) };
    },

    get: async (principal: Principal, id: string) => withUsage(await findVisible(principal, id)),

    /**
     * Revokes at once: the key stops working on this instance before the response is sent. The
     * last key able to administer the organisation is refused (LAST_ADMIN_KEY).
     */
    async revoke(principal: Principal, id: string): Promise<ApiKeyRow> {
      const row = await findManageable(principal, id);
      await lockout.assertKeyMayGo(row, 'revoked');
      await deps.keys.update(row.id, { status: 'revoked', last_updated_at: now() });
      deps.verifier.invalidate(row.id);
      return row;
    },

    /** Changes a key's name, scopes, expiry and limits; raising a credit limit lets it through again at once. */
    async update(principal: Principal, id: string, body: UpdateApiKeyBody): Promise<ApiKeyRow> {
      const row = await findManageable(principal, id);
      const patch: Partial<ApiKeyRow> = { last_updated_at: now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      if (body.scopes !== undefined) {
        checkScopes(principal, body.scopes, row.type !== 'organisation-service');
        if (!body.scopes.includes(ADMIN_KEY_CREATE_SCOPE)) await lockout.assertKeyMayGo(row, 'changed');
        patch.scopes = JSON.stringify(body.scopes);
      }
      if (body.expires_at !== undefined) {
        patch.expires_at = checkExpiry(body.expires_at);
        // A later (or no) expiry brings back a key the lifecycle worker marked expired.
        if (row.status === 'expired') patch.status = 'active';
      }
      if (body.rotation_policy !== undefined)
        Object.assign(patch, await rotationFields(principal, row.workspace_id, body.rotation_policy, row.id));
      if (body.defaults !== undefined) patch.defaults = await defaultsOf(principal, row.workspace_id, body.defaults);
      if (body.rate_limits !== undefined)
        patch.rate_limits = limitsOf({ rate_limits: body.rate_limits }, deps.clock.now()).rate_limits;
      if (body.alert_emails !== undefined) patch.alert_emails = storedAlertEmails(body.alert_emails);
      const usageLimits = updatedUsageLimits(row.usage_limits, body, deps.clock.now());
      if (usageLimits !== undefined) patch.usage_limits = usageLimits;
      await deps.keys.update(row.id, patch);
      deps.verifier.invalidate(row.id);
      return { ...row, ...patch };
    },

    /**
     * Issues a new secret for the key (same id, scopes and limits); the current one stays valid
     * as the previous secret for the transition period. A rotation during a transition replaces
     * the previous secret: only the latest one is kept. After a scheduled rotation (whose secret
     * nobody holds) this only issues the secret; the transition that rotation started stands.
     * A manual rotation counts as the scheduled one: the schedule restarts from now.
     */
    async rotate(principal: Principal, id: string, body: RotateApiKeyBody | null | undefined) {
      const row = await findManageable(principal, id);
      const at = deps.clock.now();
      if (row.status === 'expired' || (row.expires_at !== null && Date.parse(row.expires_at) <= at)) {
        throw new AppError(
          'INVALID_REQUEST',
          'The API key has expired; extend expires_at (PUT /v1/api-keys/{apiKeyId}) before rotating it.',
        );
      }
      const target = rotationTargetOf(row);
      if (target) return rotateIntoSecretManager(row, target, at, body);
      const stamp = new Date(at).toISOString();
      const raw = generateRawKey();
      const patch: Partial<ApiKeyRow> = {
        key_hash: hashKey(raw),
        key_hint: keyHint(raw),
        new_key_pending_since: null,
        last_updated_at: stamp,
      };
      let transitionExpiresAt: string;
      if (row.new_key_pending_since !== null && row.previous_key_expires_at !== null) {
        transitionExpiresAt = row.previous_key_expires_at;
      } else {
        const policy = parseRotationPolicy(row.rotation_policy);
        transitionExpiresAt = new Date(
          at + (body?.key_transition_period_ms ?? policy?.key_transition_period_ms ?? MIN_TRANSITION_MS),
        ).toISOString();
        Object.assign(patch, {
          previous_key_hash: row.key_hash,
          previous_key_expires_at: transitionExpiresAt,
          last_rotated_at: stamp,
        });
        if (policy)
          patch.next_rotation_at = policy.rotation_period
            ? new Date(nextRotationAfter(at, policy.rotation_period)).toISOString()
            : null;
      }
      if (!(await deps.keys.updateIfUnchanged(row.id, { key_hash: row.key_hash }, patch))) {
        throw new AppError(
          'CONFLICT',
          'The API key was rotated at the same moment by another request; read it again and retry.',
        );
      }
      deps.verifier.invalidate(row.id);
      return { row: { ...row, ...patch }, raw, transitionExpiresAt };
    },
  };
}

/** The scope that lets a key make more admin keys: without it no key can administer the rest. */
const ADMIN_KEY_CREATE_SCOPE = 'organisation_service_api_keys.create';

export type ApiKeyAdminService = ReturnType<typeof createApiKeyAdminService>;

const limitsOf = (body: Pick<CreateApiKeyBody, 'rate_limits' | 'usage_limits' | 'alert_emails'>, now: number) => ({
  rate_limits: body.rate_limits ? JSON.stringify(body.rate_limits) : null,
  usage_limits: body.usage_limits ? JSON.stringify(withResetSchedule(body.usage_limits, now)) : null,
  alert_emails: storedAlertEmails(body.alert_emails),
});

/** `alert_emails` as stored: a de-duplicated JSON list, or null for none. */
const storedAlertEmails = (emails: readonly string[] | null | undefined): string | null => {
  const unique = [...new Set((emails ?? []).map((email) => email.toLowerCase()))];
  return unique.length > 0 ? JSON.stringify(unique) : null;
};

function toObject(row: ApiKeyRow, now: number): ApiKeyObject {
  const usageLimits =
    row.usage_limits === null
      ? null
      : (JSON.parse(row.usage_limits) as ApiKeyObject['usage_limits'] & { last_reset_at?: string | null });
  const policy = parseRotationPolicy(row.rotation_policy);
  const inTransition = row.previous_key_expires_at !== null && Date.parse(row.previous_key_expires_at) > now;
  return {
    id: row.id,
    key: row.key_hint,
    name: row.name,
    ...(row.description === null ? {} : { description: row.description }),
    type: row.type,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    user_id: row.user_id,
    status: row.status,
    scopes: JSON.parse(row.scopes) as string[],
    creation_mode: row.creation_mode,
    expires_at: row.expires_at,
    rate_limits: row.rate_limits === null ? null : (JSON.parse(row.rate_limits) as ApiKeyObject['rate_limits']),
    ...(usageLimits === null ? {} : { usage_limits: usageLimits }),
    last_reset_at: usageLimits?.last_reset_at ?? null,
    rotation_policy:
      policy === null
        ? null
        : {
            rotation_period: policy.rotation_period,
            next_rotation_at: row.next_rotation_at,
            key_transition_period_ms: policy.key_transition_period_ms,
            secret_reference_id: policy.secret_reference_id ?? null,
            secret_key: policy.secret_key ?? null,
          },
    ...(row.defaults === null || row.defaults === undefined
      ? {}
      : { defaults: withAllowedModels(JSON.parse(row.defaults) as NonNullable<ApiKeyObject['defaults']>) }),
    alert_emails: row.alert_emails ? (JSON.parse(row.alert_emails) as string[]) : [],
    key_transition_expires_at: inTransition ? row.previous_key_expires_at : null,
    new_key_pending_since: row.new_key_pending_since,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'api-key',
  };
}

/** Keys stored before model limits existed have no `allowed_models`: null, any model. */
const withAllowedModels = (defaults: NonNullable<ApiKeyObject['defaults']>) => ({
  ...defaults,
  allowed_models: defaults.allowed_models ?? null,
});
