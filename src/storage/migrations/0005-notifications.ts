import type { Kysely } from 'kysely';

/** The alert e-mail outbox: one row per alert, unique by its dedupe key. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text', (c) => c.notNull().unique())
    .addColumn('recipients', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body_text', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('claim_token', 'text')
    .addColumn('claimed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'text')
    .execute();
  // The delivery worker's two queries: due pending rows, and rows stuck in `sending`.
  await db.schema
    .createIndex('notifications_status_due')
    .on('notifications')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('notifications_org_time')
    .on('notifications')
    .columns(['organisation_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('notifications').execute();
}
