import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../postgres/open-postgres.js';

/**
 * Indexes for `GET /v1/logs`, which lists newest first (`created_at desc, seq desc`) and counts
 * at most a bound of matching rows:
 * - by API key (the key filter, and callers who see only their own keys' logs);
 * - on PostgreSQL, the organisation's index gains `seq`, so that a listing reads its page in the
 *   index's order instead of walking the primary key backwards through every newer row. SQLite
 *   needs no such index: every index entry already ends with the rowid (`seq`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`CREATE INDEX request_logs_key_time ON request_logs (api_key_id, created_at, seq)`.execute(db);
    await sql`CREATE INDEX request_logs_org_time_seq ON request_logs (organisation_id, created_at, seq)`.execute(db);
    // The new index does all the old one did (it begins with the same columns).
    await sql`DROP INDEX request_logs_org_time`.execute(db);
    return;
  }
  await sql`CREATE INDEX request_logs_key_time ON request_logs (api_key_id, created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX request_logs_key_time`.execute(db);
  if (isPostgres(db)) {
    await sql`CREATE INDEX request_logs_org_time ON request_logs (organisation_id, created_at)`.execute(db);
    await sql`DROP INDEX request_logs_org_time_seq`.execute(db);
  }
}
