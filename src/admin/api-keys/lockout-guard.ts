import { AppError } from '../../lib/errors.js';
import type { ApiKeyRepository, ApiKeyRow } from '../../storage/repositories/api-keys.js';

/**
 * The rule that nobody can lock the organisation out through the API: a change that would leave
 * no active, unexpired admin key of an owner or admin (one that may create admin keys) is refused
 * with LAST_ADMIN_KEY. The check and the change run in the audited request's one transaction, so
 * two requests cannot each take away "the other" last key. Expiry set by the operator still
 * applies when it comes; `svcgw admin recover` is the way back then (docs/bootstrap.md).
 */
export function createLockoutGuard(keys: Pick<ApiKeyRepository, 'countAdministeringKeys'>, now: () => string) {
  const refuse = (message: string) =>
    new AppError(
      'LAST_ADMIN_KEY',
      `${message} Create another admin key for an owner or admin first (POST /v1/api-keys/organisation/service); if you are already locked out, run svcgw admin recover on the server's data directory.`,
    );

  return {
    /** Before a key is revoked or loses the scope to create admin keys. */
    async assertKeyMayGo(row: ApiKeyRow, verb: 'revoked' | 'changed'): Promise<void> {
      if (row.type !== 'organisation-service' || row.status !== 'active') return;
      const others = await keys.countAdministeringKeys(row.organisation_id, now(), { keyId: row.id });
      if (others > 0) return;
      // Only refuse when this key is itself one that counts (else the organisation has none anyway).
      const withIt = await keys.countAdministeringKeys(row.organisation_id, now());
      if (withIt > 0)
        throw refuse(`This is the last active admin key of an owner or admin; it cannot be ${verb} this way.`);
    },

    /** Before a user is removed, deactivated or loses the admin role (their keys stop administering). */
    async assertUserMayGo(
      organisationId: string,
      userId: string,
      verb: 'removed' | 'demoted' | 'deactivated',
    ): Promise<void> {
      const others = await keys.countAdministeringKeys(organisationId, now(), { userId });
      if (others > 0) return;
      const withThem = await keys.countAdministeringKeys(organisationId, now());
      if (withThem > 0)
        throw refuse(`This user holds the last active admin key of an owner or admin; they cannot be ${verb}.`);
    },
  };
}

export type LockoutGuard = ReturnType<typeof createLockoutGuard>;
