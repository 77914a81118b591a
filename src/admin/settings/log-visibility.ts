import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../storage/database.js';
import type { SecuritySettingsService } from './security-settings.js';

/**
 * Request logs limited to the API keys of one user: what a workspace member or manager sees
 * when data visibility (`membersViewAllData` / `managersViewAllData`) is off. Lists pass the
 * owner to the request-log repository's `list` (`ownerUserId`).
 */
export function createLogVisibility({
  db,
  settings,
}: {
  db: Db;
  settings: Pick<SecuritySettingsService, 'ownDataOnly'>;
}) {
  const keysOf = (organisationId: string, userId: string) =>
    db.selectFrom('api_keys').select('id').where('organisation_id', '=', organisationId).where('user_id', '=', userId);

  return {
    /** The user whose keys' logs the caller is limited to, or null when it sees every log its key reaches. */
    ownDataOnly: (principal: Principal): Promise<string | null> => settings.ownDataOnly(principal),

    /** Whether the key belongs to the user (revoked and expired keys included). */
    async ownsKey(organisationId: string, userId: string, apiKeyId: string): Promise<boolean> {
      return (await keysOf(organisationId, userId).where('id', '=', apiKeyId).executeTakeFirst()) !== undefined;
    },
  };
}

export type LogVisibility = ReturnType<typeof createLogVisibility>;
