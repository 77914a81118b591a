import type { SecretBox } from '../lib/secret-box.js';
import type { Db } from '../storage/database.js';
import { createSecretReferenceRepository } from '../storage/repositories/secret-references.js';
import type { SecretManagers } from './secret-managers.js';
import { targetOf } from './target.js';
import { SecretManagerError } from './types.js';

/** Where a key's rotation policy sends its new secret. */
export interface RotationTarget {
  secretReferenceId: string;
  secretKey: string | null;
}

/**
 * Writes an API key's new secret into the secret reference its rotation policy names, through
 * the same vendor clients the gateway reads with (PutSecretValue, setSecret, a KV v2 write).
 */
export function createRotationWriter(deps: { db: Db; secretBox: SecretBox; managers: SecretManagers }) {
  const references = createSecretReferenceRepository(deps.db);
  return {
    /** Resolves when the secret manager has stored `raw`; a `SecretManagerError` otherwise. */
    async write(organisationId: string, target: RotationTarget, raw: string): Promise<{ slug: string }> {
      const [row] = await references.findActiveByIds(organisationId, [target.secretReferenceId]);
      if (!row)
        throw new SecretManagerError(
          'not_found',
          `The secret reference ${target.secretReferenceId} named by the rotation policy has been deleted.`,
        );
      await deps.managers.write(targetOf(row, deps.secretBox), target.secretKey ?? row.secret_key, raw);
      return { slug: row.slug };
    },
  };
}

export type RotationWriter = ReturnType<typeof createRotationWriter>;
