import {
  generateRawKey,
  hashKey,
  keyHint,
  MIN_TRANSITION_MS,
  nextRotationAfter,
  parseRotationPolicy,
} from '../../auth/api-key-service.js';
import type { Principal } from '../../auth/principal.js';
import { rotateThroughSecretManager, rotationTargetOf } from '../../auth/vault-rotation.js';
import { AppError } from '../../lib/errors.js';
import type { ApiKeyRow } from '../../storage/repositories/api-keys.js';
import { findManageableKey } from './key-access.js';
import type { RotateApiKeyBody } from './schemas.js';
import type { ApiKeyAdminDeps } from './service-deps.js';

const rotatedMeanwhile = () =>
  new AppError('CONFLICT', 'The API key was rotated at the same moment by another request; read it again and retry.');

/** Manual rotation: a new secret for the same key, the old one kept for a transition period. */
export function createApiKeyRotation(deps: Pick<ApiKeyAdminDeps, 'keys' | 'verifier' | 'clock' | 'rotationWriter'>) {
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
    if (!result.ok && result.reason === 'conflict') throw rotatedMeanwhile();
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
    /**
     * Issues a new secret for the key (same id, scopes and limits); the current one stays valid
     * as the previous secret for the transition period. A rotation during a transition replaces
     * the previous secret: only the latest one is kept. After a scheduled rotation (whose secret
     * nobody holds) this only issues the secret; the transition that rotation started stands.
     * A manual rotation counts as the scheduled one: the schedule restarts from now.
     */
    async rotate(principal: Principal, id: string, body: RotateApiKeyBody | null | undefined) {
      const row = await findManageableKey(deps.keys, principal, id);
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
      if (!(await deps.keys.updateIfUnchanged(row.id, { key_hash: row.key_hash }, patch))) throw rotatedMeanwhile();
      deps.verifier.invalidate(row.id);
      return { row: { ...row, ...patch }, raw, transitionExpiresAt };
    },
  };
}
