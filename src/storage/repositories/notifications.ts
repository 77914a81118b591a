import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { NotificationStatus, NotificationsTable } from '../schema.js';

export type NotificationRow = Selectable<NotificationsTable>;
export type NotificationInsert = Insertable<NotificationsTable>;

const changed = (result: { numUpdatedRows: bigint }) => result.numUpdatedRows > 0n;

/**
 * SQL of the alert outbox. Every state change after the claim is conditioned on the claim
 * token, so a worker whose row was recovered from `sending` (it was thought dead) cannot
 * overwrite the outcome of the worker that took the row over.
 */
export function createNotificationRepository(db: Db) {
  return {
    existsByDedupeKey: async (dedupeKey: string) =>
      (await db.selectFrom('notifications').select('id').where('dedupe_key', '=', dedupeKey).executeTakeFirst()) !==
      undefined,

    /** Insert-or-ignore on the dedupe key (SQLite and PostgreSQL alike); true when the row is new. */
    insertIfNew: async (row: NotificationInsert) => {
      const result = await db
        .insertInto('notifications')
        .values(row)
        .onConflict((oc) => oc.column('dedupe_key').doNothing())
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },

    /** Organisation owners and admins, then the workspace's admins and managers, oldest first. */
    findAlertRecipients: async (organisationId: string, workspaceId: string | null): Promise<string[]> => {
      const orgAdmins = await db
        .selectFrom('users')
        .select('email')
        .where('organisation_id', '=', organisationId)
        .where('role', 'in', ['owner', 'admin'])
        .orderBy('created_at')
        .execute();
      const workspaceAdmins =
        workspaceId === null
          ? []
          : await db
              .selectFrom('workspace_members')
              .innerJoin('users', 'users.id', 'workspace_members.user_id')
              .select('users.email')
              .where('workspace_members.workspace_id', '=', workspaceId)
              .where('users.organisation_id', '=', organisationId)
              .where('workspace_members.role', 'in', ['admin', 'manager'])
              .orderBy('users.created_at')
              .execute();
      return [...orgAdmins, ...workspaceAdmins].map((r) => r.email);
    },

    listDue: (nowIso: string, limit: number) =>
      db
        .selectFrom('notifications')
        .selectAll()
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', nowIso)
        .orderBy('next_attempt_at')
        .orderBy('created_at')
        .limit(limit)
        .execute(),

    /** Moves one row from pending to sending; only one of several racing callers gets true. */
    claim: async (id: string, token: string, nowIso: string) =>
      changed(
        await db
          .updateTable('notifications')
          .set({ status: 'sending', claim_token: token, claimed_at: nowIso })
          .where('id', '=', id)
          .where('status', '=', 'pending')
          .executeTakeFirst(),
      ),

    markSent: async (id: string, token: string, nowIso: string, attempts: number) =>
      changed(
        await db
          .updateTable('notifications')
          .set({ status: 'sent', sent_at: nowIso, attempts, last_error: null, claim_token: null, claimed_at: null })
          .where('id', '=', id)
          .where('claim_token', '=', token)
          .executeTakeFirst(),
      ),

    /** Records a failed attempt: back to pending at `nextAttemptAt`, or `failed` for good. */
    markAttemptFailed: async (
      id: string,
      token: string,
      outcome: {
        status: Extract<NotificationStatus, 'pending' | 'failed'>;
        attempts: number;
        nextAttemptAt: string;
        lastError: string;
      },
    ) =>
      changed(
        await db
          .updateTable('notifications')
          .set({
            status: outcome.status,
            attempts: outcome.attempts,
            next_attempt_at: outcome.nextAttemptAt,
            last_error: outcome.lastError,
            claim_token: null,
            claimed_at: null,
          })
          .where('id', '=', id)
          .where('claim_token', '=', token)
          .executeTakeFirst(),
      ),

    /**
     * Rows left in `sending` since before `cutoffIso` (their worker crashed or was killed) count
     * one attempt and return to pending, or become failed once they have used every attempt.
     */
    recoverStale: async (cutoffIso: string, nowIso: string, maxAttempts: number) => {
      const stale = (status: NotificationStatus) =>
        db
          .updateTable('notifications')
          .set((eb) => ({
            status,
            attempts: eb('attempts', '+', 1),
            next_attempt_at: nowIso,
            last_error: 'interrupted while sending',
            claim_token: null,
            claimed_at: null,
          }))
          .where('status', '=', 'sending')
          .where('claimed_at', '<', cutoffIso);
      const failed = await stale('failed')
        .where('attempts', '>=', maxAttempts - 1)
        .executeTakeFirst();
      const pending = await stale('pending').executeTakeFirst();
      return { failed: Number(failed.numUpdatedRows), pending: Number(pending.numUpdatedRows) };
    },

    findById: (id: string) => db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst(),

    /** Newest first; for operators and tests to see what is waiting or has failed. */
    list: (filter: { organisationId?: string; status?: NotificationStatus; limit?: number } = {}) => {
      let query = db.selectFrom('notifications').selectAll();
      if (filter.organisationId) query = query.where('organisation_id', '=', filter.organisationId);
      if (filter.status) query = query.where('status', '=', filter.status);
      return query
        .orderBy('created_at', 'desc')
        .limit(filter.limit ?? 100)
        .execute();
    },

    countByStatus: async (): Promise<Record<NotificationStatus, number>> => {
      const rows = await db
        .selectFrom('notifications')
        .select((eb) => ['status', eb.fn.countAll<number>().as('count')])
        .groupBy('status')
        .execute();
      const counts: Record<NotificationStatus, number> = { pending: 0, sending: 0, sent: 0, failed: 0 };
      for (const row of rows) counts[row.status] = Number(row.count);
      return counts;
    },
  };
}

export type NotificationRepository = ReturnType<typeof createNotificationRepository>;
