import { sql } from 'kysely';
import type { Db } from '../database.js';
import type { OrgRole, WorkspaceRole } from '../schema.js';

/** A membership with the fields of its user, as the members API shows it. */
export interface MemberRow {
  workspace_id: string;
  user_id: string;
  role: WorkspaceRole;
  created_at: string;
  last_updated_at: string | null;
  email: string;
  first_name: string | null;
  last_name: string | null;
  org_role: OrgRole;
}

export interface MemberFilter {
  workspaceId: string;
  role?: WorkspaceRole | undefined;
  email?: string | undefined;
  limit: number;
  offset: number;
}

export function createMemberRepository(db: Db) {
  const base = () =>
    db
      .selectFrom('workspace_members as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select([
        'm.workspace_id',
        'm.user_id',
        'm.role',
        'm.created_at',
        'm.last_updated_at',
        'u.email',
        'u.first_name',
        'u.last_name',
        'u.role as org_role',
      ]);

  return {
    list: async (filter: MemberFilter): Promise<{ total: number; rows: MemberRow[] }> => {
      let query = db
        .selectFrom('workspace_members as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .where('m.workspace_id', '=', filter.workspaceId);
      if (filter.role) query = query.where('m.role', '=', filter.role);
      if (filter.email) query = query.where(sql<string>`lower(u.email)`, '=', filter.email.toLowerCase());
      const { total } = await query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await query
        .select([
          'm.workspace_id',
          'm.user_id',
          'm.role',
          'm.created_at',
          'm.last_updated_at',
          'u.email',
          'u.first_name',
          'u.last_name',
          'u.role as org_role',
        ])
        .orderBy('m.created_at', 'asc')
        .orderBy('m.user_id')
        .limit(filter.limit)
        .offset(filter.offset)
        .execute();
      return { total: Number(total), rows };
    },

    find: (workspaceId: string, userId: string): Promise<MemberRow | undefined> =>
      base().where('m.workspace_id', '=', workspaceId).where('m.user_id', '=', userId).executeTakeFirst(),

    /** Adds several members at once: all of them or none. */
    add: (workspaceId: string, members: Array<{ userId: string; role: WorkspaceRole }>, stamp: string) =>
      db.transaction().execute(async (trx) => {
        for (const member of members) {
          await trx
            .insertInto('workspace_members')
            .values({
              workspace_id: workspaceId,
              user_id: member.userId,
              role: member.role,
              created_at: stamp,
              last_updated_at: stamp,
            })
            .execute();
        }
      }),

    updateRole: (workspaceId: string, userId: string, role: WorkspaceRole, stamp: string) =>
      db
        .updateTable('workspace_members')
        .set({ role, last_updated_at: stamp })
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .execute(),

    /**
     * Ends a membership, and revokes the user's own keys (`workspace-user`) in that workspace in
     * the same transaction: leaving a workspace ends one's access to it. Service keys the user
     * created stay, as they serve the workspace rather than the person.
     */
    remove: (workspaceId: string, userId: string, stamp: string) =>
      db.transaction().execute(async (trx) => {
        await trx
          .deleteFrom('workspace_members')
          .where('workspace_id', '=', workspaceId)
          .where('user_id', '=', userId)
          .execute();
        const revoked = await trx
          .updateTable('api_keys')
          .set({ status: 'revoked', last_updated_at: stamp })
          .where('workspace_id', '=', workspaceId)
          .where('user_id', '=', userId)
          .where('type', '=', 'workspace-user')
          .where('status', '!=', 'revoked')
          .executeTakeFirst();
        return Number(revoked.numUpdatedRows);
      }),
  };
}

export type MemberRepository = ReturnType<typeof createMemberRepository>;
