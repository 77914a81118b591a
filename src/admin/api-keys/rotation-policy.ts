import { MIN_TRANSITION_MS, nextRotationAfter, type StoredRotationPolicy } from '../../auth/api-key-service.js';
import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import { AppError, invalid } from '../../lib/errors.js';
import { allowsWorkspace } from '../../secrets/target.js';
import type { ApiKeyRow } from '../../storage/repositories/api-keys.js';
import type { RotationPolicyInput } from './schemas.js';
import type { ApiKeyAdminDeps } from './service-deps.js';

type RotationPolicyDeps = Pick<ApiKeyAdminDeps, 'clock' | 'secretReferences'>;

/** The stored policy and its first due time: `next_rotation_at` as given, else one period from now. */
export async function rotationFields(
  deps: RotationPolicyDeps,
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
    stored.secret_reference_id = await rotationReference(
      deps,
      principal,
      keyWorkspaceId,
      input.secret_reference_id,
      keyId,
    );
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
  deps: RotationPolicyDeps,
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
