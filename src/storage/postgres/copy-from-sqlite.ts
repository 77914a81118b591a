import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import SQLite from 'better-sqlite3';
import { sql, type RawBuilder } from 'kysely';
import { DATABASE_FILE, type Db } from '../database.js';

/** One table of the copy: its rows in the SQLite file and in PostgreSQL after the copy. */
export interface TableCount {
  table: string;
  source: number;
  /** Null for a table not copied (see `skipped`). */
  target: number | null;
  skipped?: string;
  /** Where the rows came from when not the same table of the SQLite file. */
  from?: string;
}

/** Tables the copy leaves out, with the reason shown to the operator. */
const SKIPPED: Readonly<Record<string, string>> = {
  cache_entries: 'response cache: each PostgreSQL instance keeps its own in <data_dir>/cache.sqlite',
};
/**
 * On one box log export files live in `<data_dir>/exports`; on PostgreSQL in `log_export_chunks`
 * (so any instance serves a download): the copy fills the table from the files.
 */
const EXPORT_CHUNKS = 'log_export_chunks';
/** About the size of what the export runner writes per batch. */
const EXPORT_CHUNK_BYTES = 1 << 20;

/** Kysely's bookkeeping: the target has its own, checked to name the same migrations instead. */
const BOOKKEEPING = new Set(['kysely_migration', 'kysely_migration_lock']);
/** PostgreSQL takes at most 65,535 parameters per statement. */
const MAX_PARAMETERS = 60_000;

/** The copy did not happen (the target is as it was), with a message for the operator. */
export class CopyRefusedError extends Error {
  override readonly name = 'CopyRefusedError';
}

/** The target already holds rows; the copy would mix two installations. */
export class TargetNotEmptyError extends CopyRefusedError {
  constructor(readonly tables: Array<{ table: string; rows: number }>) {
    super(
      `the PostgreSQL database already holds svcgw data (${tables.map((t) => `${t.table}: ${t.rows}`).join(', ')}); ` +
        'point --to at an empty database, or pass --force to replace what it holds',
    );
  }
}

/** Row counts differ after the copy: the transaction was rolled back, the target is as it was. */
export class CountMismatchError extends Error {
  override readonly name = 'CountMismatchError';
  constructor(readonly counts: TableCount[]) {
    const differing = counts.filter((c) => c.target !== null && c.target !== c.source).map((c) => c.table);
    super(`row counts differ in ${differing.join(', ')}; nothing was copied (the copy was rolled back)`);
  }
}

/** The SQLite file of a data directory, read-only: the copy never writes to it. */
export function openCopySource(dataDir: string): SQLite.Database {
  const source = new SQLite(join(dataDir, DATABASE_FILE), { readonly: true, fileMustExist: true });
  source.pragma('busy_timeout = 5000');
  return source;
}

export interface CopyOptions {
  /** The SQLite file, opened read-only; read in one transaction, so the copy is one snapshot of it. */
  source: SQLite.Database;
  /** The PostgreSQL database, already migrated to the schema the source has. */
  target: Db;
  /** Empty the target's svcgw tables first (in the same transaction) instead of refusing a target with data. */
  replace?: boolean;
  /** `<data_dir>/exports` of the source: finished log export files, copied into `log_export_chunks`. */
  exportsDir?: string;
  batchRows?: number;
  onTable?: (count: TableCount) => void;
}

/**
 * Copies every table of a SQLite installation into PostgreSQL in one PostgreSQL transaction:
 * parents before children (foreign keys), in multi-row batches, auto-increment sequences moved
 * past the copied ids, then every table counted on both sides. Any difference rolls the whole
 * copy back, so the target ends either equal to the source or as it was.
 */
export async function copySqliteToPostgres(options: CopyOptions): Promise<TableCount[]> {
  const { source, target } = options;
  const tables = tablesInDependencyOrder(source);
  await checkSameSchema(source, target, tables);
  const copied = tables.filter((t) => !(t in SKIPPED));

  source.prepare('BEGIN').run();
  try {
    const sourceCounts = new Map(tables.map((t) => [t, countSqlite(source, t)]));
    return await target.transaction().execute(async (trx) => {
      const held = [];
      for (const table of copied) {
        const rows = await countPostgres(trx, table);
        if (rows > 0) held.push({ table, rows });
      }
      if (held.length > 0 && !options.replace) throw new TargetNotEmptyError(held);
      if (held.length > 0) await sql`TRUNCATE ${sql.join(copied.map((t) => sql.table(t)))}`.execute(trx);

      const counts: TableCount[] = [];
      for (const table of tables) {
        if (table === EXPORT_CHUNKS && options.exportsDir) {
          const files = await copyExportFiles(source, trx, options.exportsDir);
          const count: TableCount = {
            table,
            source: files.chunks,
            target: await countPostgres(trx, table),
            from: `${files.files} export file(s) in ${options.exportsDir}`,
          };
          counts.push(count);
          options.onTable?.(count);
          continue;
        }
        const skipped = SKIPPED[table];
        if (skipped === undefined)
          await copyTable(source, trx, table, options.batchRows ?? 1000).catch((error: unknown) => {
            // A value PostgreSQL refuses: say in which table; the transaction takes back what was written.
            throw new CopyRefusedError(`copying ${table} failed, nothing was copied: ${(error as Error).message}`);
          });
        const count: TableCount = {
          table,
          source: sourceCounts.get(table) ?? 0,
          target: skipped === undefined ? await countPostgres(trx, table) : null,
          ...(skipped === undefined ? {} : { skipped }),
        };
        counts.push(count);
        options.onTable?.(count);
      }
      await advanceSequences(trx, copied);
      if (counts.some((c) => c.target !== null && c.target !== c.source)) throw new CountMismatchError(counts);
      return counts;
    });
  } finally {
    source.prepare('COMMIT').run();
  }
}

async function copyTable(source: SQLite.Database, trx: Db, table: string, batchRows: number): Promise<void> {
  const columns = (source.pragma(`table_info(${quote(table)})`) as Array<{ name: string }>).map((c) => c.name);
  const perBatch = Math.max(1, Math.min(batchRows, Math.floor(MAX_PARAMETERS / columns.length)));
  const insert = (rows: unknown[][]): RawBuilder<unknown> =>
    sql`INSERT INTO ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) VALUES ${sql.join(
      rows.map((row) => sql`(${sql.join(row)})`),
    )}`;
  // Raw rows (arrays) in the order of `columns`; the statement streams, one batch in memory at a time.
  const statement = source.prepare(`SELECT ${columns.map(quote).join(', ')} FROM ${quote(table)}`).raw(true);
  let batch: unknown[][] = [];
  for (const row of statement.iterate() as IterableIterator<unknown[]>) {
    batch.push(row);
    if (batch.length < perBatch) continue;
    await insert(batch).execute(trx);
    batch = [];
  }
  if (batch.length > 0) await insert(batch).execute(trx);
}

/** Every finished export's file, cut at line ends into chunks of about EXPORT_CHUNK_BYTES. */
async function copyExportFiles(
  source: SQLite.Database,
  trx: Db,
  dir: string,
): Promise<{ files: number; chunks: number }> {
  const finished = source
    .prepare("SELECT id FROM log_exports WHERE status = 'success' AND file_name IS NOT NULL")
    .all() as Array<{ id: string }>;
  let files = 0;
  let chunks = 0;
  for (const { id } of finished) {
    const path = join(dir, `${id}.jsonl`);
    if (!existsSync(path)) continue;
    files += 1;
    let seq = 0;
    let pending = '';
    const flush = async () => {
      await trx.insertInto(EXPORT_CHUNKS).values({ export_id: id, seq: ++seq, data: pending }).execute();
      chunks += 1;
      pending = '';
    };
    for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
      pending += `${line}\n`;
      if (pending.length >= EXPORT_CHUNK_BYTES) await flush();
    }
    if (pending.length > 0) await flush();
  }
  return { files, chunks };
}

/** Columns filled by a sequence (SQLite's autoincrement keys): the next id follows the copied ones. */
async function advanceSequences(trx: Db, tables: string[]): Promise<void> {
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%'`.execute(trx);
  for (const { table_name: table, column_name: column } of rows) {
    if (!tables.includes(table)) continue;
    await sql`SELECT setval(pg_get_serial_sequence(${table}, ${column}), coalesce(max(${sql.ref(column)}), 0) + 1, false)
      FROM ${sql.table(table)}`.execute(trx);
  }
}

/** Both sides must have run the same migrations, so that every table and column matches. */
async function checkSameSchema(source: SQLite.Database, target: Db, tables: string[]): Promise<void> {
  const sourceMigrations = (
    source.prepare('SELECT name FROM kysely_migration ORDER BY name').all() as Array<{ name: string }>
  )
    .map((r) => r.name)
    .join(', ');
  const targetMigrations = (
    await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(target)
  ).rows
    .map((r) => r.name)
    .join(', ');
  if (sourceMigrations !== targetMigrations)
    throw new CopyRefusedError(
      `the two databases are at different schema versions (SQLite: ${sourceMigrations || 'none'}; PostgreSQL: ${targetMigrations || 'none'})`,
    );
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`.execute(
    target,
  );
  for (const table of tables) {
    if (table in SKIPPED) continue;
    const wanted = (source.pragma(`table_info(${quote(table)})`) as Array<{ name: string }>).map((c) => c.name);
    const present = new Set(rows.filter((r) => r.table_name === table).map((r) => r.column_name));
    const missing = wanted.filter((c) => !present.has(c));
    if (missing.length > 0)
      throw new CopyRefusedError(`the PostgreSQL table ${table} lacks the columns ${missing.join(', ')}`);
  }
}

/**
 * The svcgw tables of the SQLite file, every table after the tables its foreign keys point at
 * (ties alphabetical, so the order is the same on every run).
 */
export function tablesInDependencyOrder(source: SQLite.Database): string[] {
  const names = (
    source
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .all() as Array<{ name: string }>
  )
    .map((r) => r.name)
    .filter((name) => !BOOKKEEPING.has(name));
  const parents = new Map(
    names.map((name) => [
      name,
      new Set(
        (source.pragma(`foreign_key_list(${quote(name)})`) as Array<{ table: string }>)
          .map((fk) => fk.table)
          .filter((parent) => parent !== name && names.includes(parent)),
      ),
    ]),
  );
  const ordered: string[] = [];
  while (ordered.length < names.length) {
    const ready = names.find((n) => !ordered.includes(n) && [...parents.get(n)!].every((p) => ordered.includes(p)));
    // A cycle of foreign keys (none in svcgw's schema): take the rest alphabetically.
    ordered.push(ready ?? names.find((n) => !ordered.includes(n))!);
  }
  return ordered;
}

/**
 * Every encrypted value of the source: the stored provider keys (`encrypted_key`), the sealed
 * fields of credential and MCP integration configurations and of secret references'
 * `auth_config`, so that the caller can check the master key.
 */
export function sealedValues(source: SQLite.Database): string[] {
  const values: string[] = [];
  const tables = new Set(
    (source.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as Array<{ name: string }>).map(
      (t) => t.name,
    ),
  );
  for (const [table, key] of [
    ['integrations', 'encrypted_key'],
    ['virtual_keys', 'encrypted_key'],
    ['mcp_integrations', 'NULL'],
  ] as const) {
    if (!tables.has(table)) continue;
    const rows = source.prepare(`SELECT ${key} AS encrypted_key, configurations FROM ${quote(table)}`).all() as Array<{
      encrypted_key: string | null;
      configurations: string;
    }>;
    for (const row of rows) {
      if (row.encrypted_key) values.push(row.encrypted_key);
      for (const field of Object.values(JSON.parse(row.configurations) as Record<string, unknown>)) {
        const sealed = (field as { $sealed?: unknown } | null)?.$sealed;
        if (typeof sealed === 'string') values.push(sealed);
      }
    }
  }
  const references = source.prepare(`SELECT auth_config FROM ${quote('secret_references')}`).all() as Array<{
    auth_config: string;
  }>;
  for (const row of references)
    for (const field of Object.values(JSON.parse(row.auth_config) as Record<string, unknown>)) {
      const sealed = (field as { $sealed?: unknown } | null)?.$sealed;
      if (typeof sealed === 'string') values.push(sealed);
    }
  return values;
}

const countSqlite = (source: SQLite.Database, table: string): number =>
  (source.prepare(`SELECT count(*) AS n FROM ${quote(table)}`).get() as { n: number }).n;

const countPostgres = async (db: Db, table: string): Promise<number> =>
  Number((await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(db)).rows[0]?.n ?? 0);

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;
