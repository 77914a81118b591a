import { sql } from 'kysely';
import type { Db } from './database.js';
import { isPostgres } from './postgres/open-postgres.js';
import { outsideRequestTransactions } from './request-transaction.js';

/** First key of every job lock (PostgreSQL's two-key advisory locks); the second is the job's name hashed. */
const JOB_LOCK_SPACE = 73_104_521;

export type Exclusive<T> = { ran: true; value: T } | { ran: false };

/**
 * Runs one tick of a background job unless another instance is running it now. On PostgreSQL
 * the tick holds a session advisory lock on a pooled connection while it runs: an instance that
 * dies mid-tick loses its connection and so the lock, and the next tick anywhere does the work
 * (every job finds what is due in the database). On SQLite (one box) it just runs; the jobs'
 * conditional updates already keep processes sharing the file from doing a step twice.
 */
export async function runExclusive<T>(db: Db, job: string, fn: () => Promise<T>): Promise<Exclusive<T>> {
  const root = outsideRequestTransactions(db);
  if (!isPostgres(root)) return { ran: true, value: await fn() };
  return root.connection().execute(async (conn) => {
    const { rows } = await sql<{
      ok: boolean;
    }>`select pg_try_advisory_lock(${JOB_LOCK_SPACE}, hashtext(${job})) as ok`.execute(conn);
    if (!rows[0]?.ok) return { ran: false };
    try {
      return { ran: true, value: await fn() };
    } finally {
      await sql`select pg_advisory_unlock(${JOB_LOCK_SPACE}, hashtext(${job}))`.execute(conn);
    }
  });
}

/** What a test (or an operator's psql) runs to hold a job's lock: the job's two keys. */
export const jobLockSql = (job: string) =>
  `select pg_advisory_lock(${JOB_LOCK_SPACE}, hashtext('${job.replace(/'/g, "''")}'))`;
