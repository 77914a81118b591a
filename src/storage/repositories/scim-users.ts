import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from '../database.js';
import type { Database, UsersTable } from '../schema.js';
import { pageOf, type PageWindow } from './paging.js';

/** One `eq` of a SCIM filter on users, as the SQL below understands it; all of a list must hold. */
export type ScimUserCondition =
  { attr: 'userName' | 'externalId' | 'id' | 'email'; value: string } | { attr: 'active'; value: boolean };

export type ScimUserPatch = Partial<
  Pick<
    UsersTable,
    | 'email'
    | 'first_name'
    | 'last_name'
    | 'scim_user_name'
    | 'external_id'
    | 'scim_attributes'
    | 'deactivated_at'
    | 'last_updated_at'
  >
>;

type UsersScope = ExpressionBuilder<Database, 'users'>;

/**
 * A user's SCIM userName: the one the provider gave, or, for people who joined another way and
 * were never claimed by a provider, their e-mail address. Matches without regard to case
 * (userName is not case-exact in RFC 7643).
 */
function userNameIs(eb: UsersScope, value: string) {
  const lowered = value.toLowerCase();
  return eb.or([
    eb(sql<string>`lower(scim_user_name)`, '=', lowered),
    eb.and([eb('scim_user_name', 'is', null), eb(sql<string>`lower(email)`, '=', lowered)]),
  ]);
}

function conditionOf(eb: UsersScope, condition: ScimUserCondition) {
  switch (condition.attr) {
    case 'userName':
      return userNameIs(eb, condition.value);
    case 'externalId':
      return eb('external_id', '=', condition.value);
    case 'id':
      return eb('id', '=', condition.value);
    case 'email':
      return eb(sql<string>`lower(email)`, '=', condition.value.toLowerCase());
    case 'active':
      return eb('deactivated_at', condition.value ? 'is' : 'is not', null);
  }
}

/** The SCIM side of users: lookups by SCIM identity, the SCIM columns, and the groups a user is in. */
export function createScimUserRepository(db: Db) {
  return {
    list: (organisationId: string, conditions: readonly ScimUserCondition[], page: PageWindow) => {
      let query = db.selectFrom('users').where('organisation_id', '=', organisationId);
      for (const condition of conditions) query = query.where((eb) => conditionOf(eb, condition));
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), page);
    },

    findById: (organisationId: string, id: string) =>
      db
        .selectFrom('users')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    /** Users holding this userName, or an e-mail address equal to it (for uniqueness checks). */
    findClaimants: (organisationId: string, userName: string, email: string) =>
      db
        .selectFrom('users')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where((eb) =>
          eb.or([
            eb(sql<string>`lower(scim_user_name)`, '=', userName.toLowerCase()),
            eb(sql<string>`lower(email)`, '=', email.toLowerCase()),
            eb(sql<string>`lower(email)`, '=', userName.toLowerCase()),
          ]),
        )
        .execute(),

    /** Which of `ids` are users of the organisation. */
    existingIds: async (organisationId: string, ids: readonly string[]): Promise<Set<string>> => {
      if (ids.length === 0) return new Set();
      const rows = await db
        .selectFrom('users')
        .select('id')
        .where('organisation_id', '=', organisationId)
        .where('id', 'in', [...ids])
        .execute();
      return new Set(rows.map((row) => row.id));
    },

    /** Owners who are not deactivated: the organisation must keep one. */
    countActiveOwners: async (organisationId: string): Promise<number> => {
      const { total } = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .where('organisation_id', '=', organisationId)
        .where('role', '=', 'owner')
        .where('deactivated_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(total);
    },

    insert: (row: UsersTable) => db.insertInto('users').values(row).execute(),

    update: (id: string, patch: ScimUserPatch) => db.updateTable('users').set(patch).where('id', '=', id).execute(),

    /** The SCIM groups each user is in, for the user resources of one page (SCIM_MEMBERSHIP_USER_MODE). */
    groupsOf: async (userIds: readonly string[]): Promise<Map<string, Array<{ id: string; display_name: string }>>> => {
      const byUser = new Map<string, Array<{ id: string; display_name: string }>>(userIds.map((id) => [id, []]));
      if (userIds.length === 0) return byUser;
      const rows = await db
        .selectFrom('scim_group_members as gm')
        .innerJoin('scim_groups as g', 'g.id', 'gm.group_id')
        .select(['gm.user_id', 'g.id', 'g.display_name'])
        .where('gm.user_id', 'in', [...userIds])
        .orderBy('g.display_name')
        .orderBy('g.id')
        .execute();
      for (const row of rows) byUser.get(row.user_id)?.push({ id: row.id, display_name: row.display_name });
      return byUser;
    },
  };
}

export type ScimUserRepository = ReturnType<typeof createScimUserRepository>;
