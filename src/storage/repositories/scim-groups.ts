import { sql } from 'kysely';
import type { Db } from '../database.js';
import type { ScimGroupsTable } from '../schema.js';
import { pageOf, type PageWindow } from './paging.js';

export type ScimGroupRow = ScimGroupsTable;

/** One `eq` of a SCIM filter on groups; `member` is `members.value` (a user id). */
export interface ScimGroupCondition {
  attr: 'displayName' | 'externalId' | 'id' | 'member';
  value: string;
}

/** A member as the group resource shows it: the user's id and SCIM userName (or e-mail). */
export interface ScimGroupMember {
  user_id: string;
  display: string;
}

/** SCIM groups and their members. Which workspaces a group grants is in scim-mappings.ts. */
export function createScimGroupRepository(db: Db) {
  return {
    list: (organisationId: string, conditions: readonly ScimGroupCondition[], page: PageWindow) => {
      let query = db.selectFrom('scim_groups').where('organisation_id', '=', organisationId);
      for (const { attr, value } of conditions) {
        if (attr === 'displayName') query = query.where(sql<string>`lower(display_name)`, '=', value.toLowerCase());
        else if (attr === 'externalId') query = query.where('external_id', '=', value);
        else if (attr === 'id') query = query.where('id', '=', value);
        else
          query = query.where((eb) =>
            eb.exists(
              eb
                .selectFrom('scim_group_members as gm')
                .select('gm.group_id')
                .whereRef('gm.group_id', '=', 'scim_groups.id')
                .where('gm.user_id', '=', value),
            ),
          );
      }
      return pageOf(query, (q) => q.selectAll().orderBy('created_at', 'asc').orderBy('id'), page);
    },

    findById: (organisationId: string, id: string) =>
      db
        .selectFrom('scim_groups')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    /** Display names are unique per organisation, without regard to case. */
    findByName: (organisationId: string, displayName: string) =>
      db
        .selectFrom('scim_groups')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where(sql<string>`lower(display_name)`, '=', displayName.toLowerCase())
        .executeTakeFirst(),

    /** Which of `ids` are groups of the organisation. */
    existingIds: async (organisationId: string, ids: readonly string[]): Promise<Set<string>> => {
      if (ids.length === 0) return new Set();
      const rows = await db
        .selectFrom('scim_groups')
        .select('id')
        .where('organisation_id', '=', organisationId)
        .where('id', 'in', [...ids])
        .execute();
      return new Set(rows.map((row) => row.id));
    },

    insert: (row: ScimGroupRow) => db.insertInto('scim_groups').values(row).execute(),

    update: (id: string, patch: Partial<Pick<ScimGroupRow, 'display_name' | 'external_id' | 'last_updated_at'>>) =>
      db.updateTable('scim_groups').set(patch).where('id', '=', id).execute(),

    /** Deletes a group and its member list (the memberships it granted are the caller's to reconcile). */
    remove: (id: string) =>
      db.transaction().execute(async (trx) => {
        await trx.deleteFrom('scim_group_members').where('group_id', '=', id).execute();
        await trx.deleteFrom('scim_groups').where('id', '=', id).execute();
      }),

    /** The members of each group, for the group resources of one page. */
    membersOf: async (groupIds: readonly string[]): Promise<Map<string, ScimGroupMember[]>> => {
      const byGroup = new Map<string, ScimGroupMember[]>(groupIds.map((id) => [id, []]));
      if (groupIds.length === 0) return byGroup;
      const rows = await db
        .selectFrom('scim_group_members as gm')
        .innerJoin('users as u', 'u.id', 'gm.user_id')
        .select(['gm.group_id', 'gm.user_id', 'u.scim_user_name', 'u.email'])
        .where('gm.group_id', 'in', [...groupIds])
        .orderBy('gm.created_at')
        .orderBy('gm.user_id')
        .execute();
      for (const row of rows)
        byGroup.get(row.group_id)?.push({ user_id: row.user_id, display: row.scim_user_name ?? row.email });
      return byGroup;
    },

    memberIds: async (groupId: string): Promise<string[]> =>
      (await db.selectFrom('scim_group_members').select('user_id').where('group_id', '=', groupId).execute()).map(
        (row) => row.user_id,
      ),

    groupIdsOf: async (userId: string): Promise<string[]> =>
      (await db.selectFrom('scim_group_members').select('group_id').where('user_id', '=', userId).execute()).map(
        (row) => row.group_id,
      ),

    addMember: (groupId: string, userId: string, stamp: string) =>
      db
        .insertInto('scim_group_members')
        .values({ group_id: groupId, user_id: userId, created_at: stamp })
        .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing())
        .execute(),

    removeMember: (groupId: string, userId: string) =>
      db.deleteFrom('scim_group_members').where('group_id', '=', groupId).where('user_id', '=', userId).execute(),
  };
}

export type ScimGroupRepository = ReturnType<typeof createScimGroupRepository>;
