import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql, type QueryExecutor } from 'kysely';
import type { Config } from '../config/schema.js';
import { migrationProvider } from './migrations/index.js';
import { isPostgres, openPostgresPool, postgresKysely } from './postgres/open-postgres.js';
import { withRequestTransactions } from './request-transaction.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;
export type Engine = 'sqlite' | 'postgres';

export const DATABASE_FILE = 'svcgw.sqlite';
/** The response cache of an instance whose storage is PostgreSQL: a local SQLite file in data_dir. */
export const CACHE_DATABASE_FILE = 'cache.sqlite';

/**
 * Storage refused at start-up, with a message for the operator (the CLI prints it and exits 1):
 * a schema newer than this code, a feature the engine cannot serve yet.
 */
export class StorageRefusedError extends Error {
  override readonly name = 'StorageRefusedError';
}

/**
 * Opens the database the settings name: PostgreSQL when `database_url` is set (several
 * instances share it), otherwise the SQLite file in `data_dir`.
 */
export function openDatabase(
  config: Pick<Config, 'data_dir' | 'database_url'> & Partial<Pick<Config, 'sqlite_cache_mb'>>,
  options: { onPoolError?: (error: Error) => void } = {},
): Db {
  if (config.database_url) return openPostgres(config.database_url, options.onPoolError ?? (() => undefined));
  return openSqlite(config.data_dir, DATABASE_FILE, config.sqlite_cache_mb);
}

export const engineOf = (db: { getExecutor(): QueryExecutor }): Engine => (isPostgres(db) ? 'postgres' : 'sqlite');

/**
 * SQLite's page cache per connection, MiB, unless the settings say otherwise. better-sqlite3
 * builds SQLite with 16 MiB; the gateway's writes touch the last pages of each index (ids are
 * time-ordered) and its reads go through caches of its own, so 16 MiB only held the file's
 * recent pages, growing the process by up to 16 MiB as the file grew (docs/benchmarks.md).
 */
export const DEFAULT_SQLITE_CACHE_MB = 4;

/**
 * The page size of a database file this process creates, bytes. SQLite's default is 4 KiB; a
 * request log row with guardrail results (~2.1 KB) then fills a page of its own, and every page
 * is written twice (to the WAL, then by the checkpoint). With 8 KiB, three such rows share a page:
 * 58 % fewer writes and ~5 µs less CPU per guarded row, the same CPU for rows without results
 * (docs/benchmarks.md, tenth pass). A file made with another page size keeps it: changing it
 * takes a `VACUUM` with the server stopped.
 */
export const SQLITE_PAGE_SIZE = 8192;

/**
 * Opens (or creates) the embedded SQLite database in WAL mode. WAL lets readers run while the
 * batched writers commit, and `synchronous=NORMAL` is the durable-on-checkpoint setting that
 * WAL is designed for.
 */
export function openSqlite(dataDir: string, file = DATABASE_FILE, cacheMb = DEFAULT_SQLITE_CACHE_MB): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const sqlite = new SQLite(join(dataDir, file));
  // Only a file without pages yet takes it, and only before WAL mode is set: a no-op otherwise.
  sqlite.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // A negative cache_size is in KiB.
  sqlite.pragma(`cache_size = ${-Math.round(cacheMb * 1024)}`);
  // Queries made inside an audited admin request run in that request's transaction (see request-transaction.ts).
  const db = withRequestTransactions(new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }), {
    sqlite,
  });
  rawHandles.set(db, sqlite);
  return db;
}

/** A pool of connections to PostgreSQL; audited admin requests each hold one for their transaction. */
export function openPostgres(url: string, onPoolError: (error: Error) => void): Db {
  return withRequestTransactions(postgresKysely(openPostgresPool(url, onPoolError)), { postgres: true });
}

const rawHandles = new WeakMap<Db, SQLite.Database>();

/**
 * The better-sqlite3 handle behind a SQLite `Db`, for the one hot write that is worth a
 * prepared statement (request logs); undefined for other databases.
 */
export const rawSqlite = (db: Db): SQLite.Database | undefined => rawHandles.get(db);

/** Any number: instances of svcgw on one PostgreSQL database take this advisory lock to migrate one at a time. */
const MIGRATION_LOCK = 7_310_452_118;

/**
 * Runs every pending migration; fails with the migration's own error. On PostgreSQL the
 * instances starting together take turns (an advisory lock held on a connection of its own):
 * the first migrates, the others find nothing left to do. An instance whose code does not know
 * a migration the database has already run (a newer version migrated it) refuses to start.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  if (!isPostgres(db)) return migrate(db);
  return db.connection().execute(async (lockHolder) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(lockHolder);
    try {
      return await migrate(db);
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(lockHolder);
    }
  });
}

async function migrate(db: Db): Promise<string[]> {
  await refuseNewerSchema(db);
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error('migration failed', { cause: error });
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

async function refuseNewerSchema(db: Db): Promise<void> {
  const exists = isPostgres(db)
    ? sql<{ found: string | null }>`select to_regclass('kysely_migration')::text as found`
    : sql<{
        found: string | null;
      }>`select name as found from sqlite_master where type = 'table' and name = 'kysely_migration'`;
  if (!(await exists.execute(db)).rows[0]?.found) return;
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  const known = await migrationProvider.getMigrations();
  const unknown = rows.map((r) => r.name).filter((name) => !(name in known));
  if (unknown.length === 0) return;
  throw new StorageRefusedError(
    `the database was migrated by a newer svcgw (migrations ${unknown.join(', ')} are unknown to this version); ` +
      'start the newer version, or point this one at a database of its own version',
  );
}
