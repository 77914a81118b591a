import type { Db } from '../database.js';
import type { ApiKeysTable, OrgRole, WorkspaceRole, WorkspaceStatus } from '../schema.js';

export type ApiKeyRow = ApiKeysTable;

export interface ApiKeyWithRoles extends ApiKeyRow {
  org_role: OrgRole | null;
  workspace_role: WorkspaceRole | null;
  /** Status of the key's workspace (null for admin keys). */
  workspace_status: WorkspaceStatus | null;
  /** The workspace's model limits (JSON array), when it has any. */
  workspace_allowed_models?: string | null;
  /** The key's workspace's `defaults` JSON (its default metadata is merged under the key's). */
  workspace_defaults?: string | null;
  /** Set while the key's user is deactivated (SCIM): the key is refused meanwhile. */
  user_deactivated_at?: string | null;
}

export function createApiKeyRepository(db: Db) {
  return {
    insert: (row: ApiKeyRow) => db.insertInto('api_keys').values(row).execute(),

    findById: (organisationId: string, id: string) =>
      db
        .selectFrom('api_keys')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    list: async (filter: { organisationId: string; workspaceId?: string; limit: number; offset: number }) => {
      let query = db
        .selectFrom('api_keys')
        .where('organisation_id', '=', filter.organisationId)
        .where('status', '!=', 'revoked');
      if (filter.workspaceId) query = query.where('workspace_id', '=', filter.workspaceId);
      const [{ total }] = (await query.select((eb) => eb.fn.countAll<number>().as('total')).execute()) as [
        { total: number },
      ];
      const rows = await query
        .selectAll()
        .orderBy('created_at', 'asc')
        .orderBy('id')
        .limit(filter.limit)
        .offset(filter.offset)
        .execute();
      return { total: Number(total), rows };
    },

    update: (id: string, patch: Partial<ApiKeyRow>) =>
      db.updateTable('api_keys').set(patch).where('id', '=', id).execute(),

    /** The key whose current or previous (rotated-out) secret has this hash, with the roles of its user. */
    findByAnyHashWithRoles: (keyHash: string): Promise<ApiKeyWithRoles | undefined> =>
      db
        .selectFrom('api_keys as k')
        .leftJoin('users as u', 'u.id', 'k.user_id')
        .leftJoin('workspace_members as m', (join) =>
          join.onRef('m.workspace_id', '=', 'k.workspace_id').onRef('m.user_id', '=', 'k.user_id'),
        )
        .leftJoin('workspaces as w', 'w.id', 'k.workspace_id')
        .selectAll('k')
        .select([
          'u.role as org_role',
          'm.role as workspace_role',
          'w.status as workspace_status',
          'w.allowed_models as workspace_allowed_models',
          'w.defaults as workspace_defaults',
          'u.deactivated_at as user_deactivated_at',
        ])
        .where((eb) => eb.or([eb('k.key_hash', '=', keyHash), eb('k.previous_key_hash', '=', keyHash)]))
        .executeTakeFirst(),

    /**
     * Applies `patch` only while the key still has the secret (and schedule) it was read with, so
     * that of two racing rotations (two instances, or a manual one and the worker) one wins and
     * the other changes nothing. True when this call applied it.
     */
    updateIfUnchanged: async (
      id: string,
      guard: { key_hash: string; next_rotation_at?: string | null },
      patch: Partial<ApiKeyRow>,
    ): Promise<boolean> => {
      let query = db.updateTable('api_keys').set(patch).where('id', '=', id).where('key_hash', '=', guard.key_hash);
      if (guard.next_rotation_at !== undefined)
        query =
          guard.next_rotation_at === null
            ? query.where('next_rotation_at', 'is', null)
            : query.where('next_rotation_at', '=', guard.next_rotation_at);
      return (await query.executeTakeFirst()).numUpdatedRows > 0n;
    },

    /** Active keys whose expiry has passed (the lifecycle worker marks them expired). */
    listExpiredActive: (nowIso: string) =>
      db
        .selectFrom('api_keys')
        .selectAll()
        .where('status', '=', 'active')
        .where('expires_at', 'is not', null)
        .where('expires_at', '<=', nowIso)
        .execute(),

    markExpired: async (id: string, nowIso: string): Promise<boolean> =>
      (
        await db
          .updateTable('api_keys')
          .set({ status: 'expired', last_updated_at: nowIso })
          .where('id', '=', id)
          .where('status', '=', 'active')
          .executeTakeFirst()
      ).numUpdatedRows > 0n,

    /** Active keys expiring in (fromIso, toIso]. */
    listExpiringBetween: (fromIso: string, toIso: string) =>
      db
        .selectFrom('api_keys')
        .selectAll()
        .where('status', '=', 'active')
        .where('expires_at', '>', fromIso)
        .where('expires_at', '<=', toIso)
        .execute(),

    /** Active keys with a scheduled rotation at or before `toIso` (and after `fromIso` when given). */
    listRotationsDue: (toIso: string, fromIso?: string) => {
      let query = db
        .selectFrom('api_keys')
        .selectAll()
        .where('status', '=', 'active')
        .where('next_rotation_at', 'is not', null)
        .where('next_rotation_at', '<=', toIso);
      if (fromIso !== undefined) query = query.where('next_rotation_at', '>', fromIso);
      return query.execute();
    },

    /** Active keys whose previous secret is still in its transition period. */
    listInTransition: (nowIso: string) =>
      db
        .selectFrom('api_keys')
        .selectAll()
        .where('status', '=', 'active')
        .where('previous_key_expires_at', '>', nowIso)
        .where('last_rotated_at', 'is not', null)
        .execute(),

    /**
     * How many keys keep the organisation administrable: active, unexpired admin keys that may
     * create admin keys, held by an owner or admin. `except` leaves out one key or one user's keys
     * (the ones a change is about to take away).
     */
    countAdministeringKeys: async (
      organisationId: string,
      nowIso: string,
      except: { keyId?: string; userId?: string } = {},
    ): Promise<number> => {
      let query = db
        .selectFrom('api_keys as k')
        .innerJoin('users as u', 'u.id', 'k.user_id')
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .where('k.organisation_id', '=', organisationId)
        .where('k.type', '=', 'organisation-service')
        .where('k.status', '=', 'active')
        .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', nowIso)]))
        .where('k.scopes', 'like', '%"organisation_service_api_keys.create"%')
        .where('u.role', 'in', ['owner', 'admin'])
        .where('u.deactivated_at', 'is', null);
      if (except.keyId !== undefined) query = query.where('k.id', '!=', except.keyId);
      if (except.userId !== undefined) query = query.where('k.user_id', '!=', except.userId);
      const { total } = await query.executeTakeFirstOrThrow();
      return Number(total);
    },

    findUserEmail: async (userId: string): Promise<string | undefined> =>
      (await db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst())?.email,
  };
}

export type ApiKeyRepository = ReturnType<typeof createApiKeyRepository>;
