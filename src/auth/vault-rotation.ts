import type { RotationTarget, RotationWriter } from '../secrets/rotation-writer.js';
import type { ApiKeyRepository, ApiKeyRow } from '../storage/repositories/api-keys.js';
import { generateRawKey, hashKey, keyHint, parseRotationPolicy, type ApiKeyVerifier } from './api-key-service.js';

export type VaultRotationResult =
  | { ok: true; raw: string; slug: string }
  /** Another rotation changed the key first; nothing was written. */
  | { ok: false; reason: 'conflict' }
  /** The secret manager refused or failed; the key's current secret is unchanged. */
  | { ok: false; reason: 'write_failed'; error: unknown };

/** The secret reference a key's rotation policy writes to, or null. */
export function rotationTargetOf(row: Pick<ApiKeyRow, 'rotation_policy'>): RotationTarget | null {
  const policy = parseRotationPolicy(row.rotation_policy);
  return policy?.secret_reference_id
    ? { secretReferenceId: policy.secret_reference_id, secretKey: policy.secret_key ?? null }
    : null;
}

/**
 * A rotation whose new secret goes to a secret manager, in an order that never leaves clients
 * holding a secret the server does not accept:
 *
 * 1. the new secret is made valid first, as the *previous* secret for the transition period,
 *    next to the current one (which stays current);
 * 2. it is written to the secret manager;
 * 3. only then does it become the current secret, and the old one the previous one.
 *
 * If the write fails, the key keeps its current secret and nothing is lost: clients reading the
 * manager still hold a valid secret, and the new one (valid as the previous secret until the
 * transition ends, in case the write did land) is retried by the next run. A crash between the
 * steps leaves the same state. `guard` is what the key must still hold (its hash, and for a
 * scheduled rotation its due time); `done` is the rest of the final change (schedule, times).
 */
export async function rotateThroughSecretManager(
  deps: { keys: ApiKeyRepository; writer: RotationWriter; verifier: Pick<ApiKeyVerifier, 'invalidate'> },
  row: ApiKeyRow,
  options: {
    target: RotationTarget;
    now: number;
    transitionMs: number;
    guard: { key_hash: string; next_rotation_at?: string | null };
    done: Partial<ApiKeyRow>;
  },
): Promise<VaultRotationResult> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const raw = generateRawKey();
  const newHash = hashKey(raw);
  const transitionEnd = iso(options.now + options.transitionMs);
  const staged = await deps.keys.updateIfUnchanged(row.id, options.guard, {
    previous_key_hash: newHash,
    previous_key_expires_at: transitionEnd,
    last_updated_at: iso(options.now),
  });
  if (!staged) return { ok: false, reason: 'conflict' };
  deps.verifier.invalidate(row.id);
  let slug: string;
  try {
    ({ slug } = await deps.writer.write(row.organisation_id, options.target, raw));
  } catch (error) {
    return { ok: false, reason: 'write_failed', error };
  }
  const promoted = await deps.keys.updateIfUnchanged(
    row.id,
    { key_hash: row.key_hash },
    {
      ...options.done,
      key_hash: newHash,
      key_hint: keyHint(raw),
      previous_key_hash: row.key_hash,
      previous_key_expires_at: transitionEnd,
      last_rotated_at: iso(options.now),
      new_key_pending_since: null,
      last_updated_at: iso(options.now),
    },
  );
  deps.verifier.invalidate(row.id);
  return promoted ? { ok: true, raw, slug } : { ok: false, reason: 'conflict' };
}
