import { generateRawKey, type ApiKeyVerifier } from '../auth/api-key-service.js';
import type { Principal } from '../auth/principal.js';
import { ALL_SCOPES } from '../auth/scopes.js';
import { newId } from '../lib/ids.js';
import type { Db } from '../storage/database.js';

export interface StartupAdmin {
  /** A key accepted by this process only, as the owner with every scope; never stored or shown. */
  apiKey: string;
  /** Stops accepting it. */
  release(): void;
}

/**
 * Lets the server apply its startup file (`svcgw serve --apply`) through its own admin API, as
 * the organisation's first owner: the same validation, tenant rules and audit records as any
 * client's requests, without an owner key in the file or the environment. The key lives in the
 * verifier's memory for the length of the apply; audit records name the owner and say `system`.
 */
export async function holdStartupAdmin(db: Db, keys: ApiKeyVerifier, via: string): Promise<StartupAdmin> {
  const owner = await db
    .selectFrom('users')
    .select(['id', 'organisation_id', 'created_at'])
    .where('role', '=', 'owner')
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst();
  if (!owner) throw new Error('the organisation has no owner; run svcgw admin recover first');
  const principal: Principal = {
    keyId: newId(),
    keyType: 'organisation-service',
    organisationId: owner.organisation_id,
    workspaceId: null,
    userId: owner.id,
    orgRole: 'owner',
    workspaceRole: null,
    scopes: new Set(ALL_SCOPES),
    rateLimits: null,
    usageLimits: null,
    keyCreatedAt: new Date().toISOString(),
    keyName: via,
    defaults: null,
    via,
  };
  const apiKey = generateRawKey();
  const release = keys.holdInMemory(apiKey, principal);
  return { apiKey, release };
}
