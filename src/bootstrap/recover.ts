import { generateRawKey } from '../auth/api-key-service.js';
import { ownerAdminKeyRow } from './bootstrap.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { Db } from '../storage/database.js';

export interface RecoveryResult {
  /** The new owner admin key, in clear only here; the database keeps its hash. */
  adminApiKey: string;
  apiKeyId: string;
  organisationId: string;
  userId: string;
  /** True when no owner was left and one was made (with `ownerEmail`). */
  userCreated: boolean;
}

export class NotInitialisedError extends Error {}

/**
 * The way back in for whoever holds the data directory: issues a new admin key with every scope
 * for the organisation's first owner (making an owner when none is left), and records it in the
 * audit log as the system's doing. One transaction: a crash leaves no key without its record.
 * A server running on the same database accepts the key at once: keys are looked up by hash and
 * a key it has never seen is read from the database.
 */
export async function recoverOwnerKey(db: Db, options: { clock: Clock; ownerEmail: string }): Promise<RecoveryResult> {
  return db.transaction().execute(async (trx) => {
    const organisation = await trx.selectFrom('organisations').select('id').orderBy('created_at').executeTakeFirst();
    if (!organisation) throw new NotInitialisedError('the database has no organisation yet; run svcgw init first.');
    const now = new Date(options.clock.now()).toISOString();

    let userId = (
      await trx
        .selectFrom('users')
        .select('id')
        .where('organisation_id', '=', organisation.id)
        .where('role', '=', 'owner')
        .orderBy('created_at')
        .orderBy('id')
        .executeTakeFirst()
    )?.id;
    const userCreated = userId === undefined;
    if (userId === undefined) {
      userId = newId();
      await trx
        .insertInto('users')
        .values({
          id: userId,
          organisation_id: organisation.id,
          email: options.ownerEmail,
          first_name: null,
          last_name: null,
          role: 'owner',
          created_at: now,
          last_updated_at: now,
        })
        .execute();
    }

    const rawKey = generateRawKey();
    const apiKeyId = newId();
    await trx
      .insertInto('api_keys')
      .values(
        ownerAdminKeyRow({
          id: apiKeyId,
          organisationId: organisation.id,
          userId,
          rawKey,
          name: 'Owner admin key (recovery)',
          description: `Issued by svcgw admin recover at ${now}.`,
          now,
        }),
      )
      .execute();

    await trx
      .insertInto('audit_logs')
      .values({
        id: newId(),
        organisation_id: organisation.id,
        workspace_id: null,
        timestamp: now,
        actor_type: 'system',
        actor_key_id: null,
        actor_user_id: null,
        action: 'recover',
        resource_type: 'api_key',
        resource_id: apiKeyId,
        method: 'CLI',
        path: 'svcgw admin recover',
        query: null,
        request_body: JSON.stringify({ owner_user_id: userId, owner_created: userCreated }),
        response_status_code: 200,
        client_ip: null,
        request_id: newId(),
      })
      .execute();

    return { adminApiKey: rawKey, apiKeyId, organisationId: organisation.id, userId, userCreated };
  });
}
