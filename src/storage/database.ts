import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { migrationProvider } from './migrations/index.js';
import { withRequestTransactions } from './request-transaction.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export const DATABASE_FILE = 'svcgw.sqlite';

/**
 * Opens (or creates) the embedded SQLite database in WAL mode. WAL lets readers run while the
 * batched writers commit, and `synchronous=NORMAL` is the durable-on-checkpoint setting that
 * WAL is designed for.
 */
export function openSqlite(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const sqlite = new SQLite(join(dataDir, DATABASE_FILE));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Queries made inside an audited admin request run in that request's transaction (see request-transaction.ts).
  const db = withRequestTransactions(
    new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }),
    sqlite,
  );
  rawHandles.set(db, sqlite);
  return db;
}

const rawHandles = new WeakMap<Db, SQLite.Database>();

/**
 * The better-sqlite3 handle behind a SQLite `Db`, for the one hot write that is worth a
 * prepared statement (request logs); undefined for other databases.
 */
export const rawSqlite = (db: Db): SQLite.Database | undefined => rawHandles.get(db);

/** Runs every pending migration; fails with the migration's own error. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error('migration failed', { cause: error });
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
