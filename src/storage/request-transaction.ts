import { AsyncLocalStorage } from 'node:async_hooks';
import type SQLite from 'better-sqlite3';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database>;

/**
 * One request's database transaction: an admin mutation and its audit record commit together
 * or not at all. The request holds the one SQLite connection (kysely's mutex) from before its
 * handler runs until its audit record is written, so everything else waits for it: it must stay
 * short, and no upstream call may happen inside it.
 *
 * Transaction control runs on the raw better-sqlite3 handle, synchronously, so that nothing can
 * slip in between two steps. Writes made on the raw handle by others meanwhile (request-log
 * batches) land inside this transaction; they register here and are written again whenever the
 * part of the transaction that holds them is undone, so that undoing a mutation never loses them.
 */
export interface RequestTransaction {
  /** The connection every query of the request goes through while the transaction is open. */
  readonly conn: Db;
  /** False once the transaction is being finished: late queries go to the database as usual. */
  open: boolean;
  /** Raw writes made inside the transaction, to write again when they are undone. */
  readonly rawWrites: Array<() => void>;
  readonly afterCommit: Array<() => unknown>;
  /** Savepoints of nested `db.transaction()` calls run one at a time. */
  nestedQueue: Promise<unknown>;
  nestedDepth: number;
  savepoints: number;
  readonly sqlite: SQLite.Database;
  readonly release: () => void;
}

const context = new AsyncLocalStorage<RequestTransaction>();
/**
 * Request transactions open in this process. On Node 20 an enabled AsyncLocalStorage installs
 * promise hooks that slow every promise of the process (the gateway's too) by half; the context
 * is only needed while a transaction is open, so it is disabled whenever none is.
 */
let openCount = 0;
const roots = new WeakMap<Db, { root: Db; sqlite: SQLite.Database }>();
/** The request transaction open on a connection, if any (at most one: it holds the connection). */
const openOn = new WeakMap<SQLite.Database, RequestTransaction>();

const MUTATION = 'svcgw_mutation';

/**
 * The database as the rest of the code sees it: inside a request transaction (same async
 * context) every query, `db.transaction()` included (as a savepoint), runs in it; elsewhere it
 * is the database itself.
 */
export function withRequestTransactions(root: Db, sqlite: SQLite.Database): Db {
  const proxy = new Proxy(root, {
    get(target, property) {
      const tx = context.getStore();
      if (tx?.open && tx.sqlite === sqlite) {
        if (property === 'transaction') return () => nestedBuilder(tx);
        if (property === 'connection') return () => ({ execute: <T>(run: (db: Db) => Promise<T>) => run(tx.conn) });
        return bound(tx.conn, property);
      }
      return bound(target, property);
    },
  });
  roots.set(proxy, { root, sqlite });
  return proxy;
}

function bound(target: Db, property: string | symbol): unknown {
  const value: unknown = Reflect.get(target, property, target);
  return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
}

/** Begins a request transaction on the database (which must come from `withRequestTransactions`). */
export async function beginRequestTransaction(db: Db): Promise<RequestTransaction> {
  const handle = roots.get(db);
  if (!handle) throw new Error('request transactions need the database opened by openSqlite');
  const { root, sqlite } = handle;
  return new Promise<RequestTransaction>((resolve, reject) => {
    root
      .connection()
      .execute(
        (conn) =>
          new Promise<void>((release) => {
            try {
              sqlite.exec(`BEGIN; SAVEPOINT ${MUTATION}`);
            } catch (error) {
              release();
              reject(error instanceof Error ? error : new Error(String(error)));
              return;
            }
            const tx: RequestTransaction = {
              conn,
              open: true,
              rawWrites: [],
              afterCommit: [],
              nestedQueue: Promise.resolve(),
              nestedDepth: 0,
              savepoints: 0,
              sqlite,
              release: () => release(),
            };
            openOn.set(sqlite, tx);
            openCount++;
            resolve(tx);
          }),
      )
      .catch(reject);
  });
}

/** The request transaction open in this async context, if any (a dry run joins it). */
export function currentRequestTransaction(): RequestTransaction | undefined {
  const tx = context.getStore();
  return tx?.open ? tx : undefined;
}

/** Runs `fn` (the rest of the request) inside the transaction's async context. */
export const runInRequestTransaction = <T>(tx: RequestTransaction, fn: () => T): T => context.run(tx, fn);

/**
 * Records a write made on the raw handle: when a request transaction is open on that handle the
 * write is inside it, and `redo` writes it again should that part be undone.
 */
export function noteRawWrite(sqlite: SQLite.Database, redo: () => void): void {
  const tx = openOn.get(sqlite);
  if (tx && sqlite.inTransaction) tx.rawWrites.push(redo);
}

/** Runs `fn` once the current request transaction commits (at once when there is none); skipped if it is undone. */
export async function afterCommit(fn: () => unknown): Promise<void> {
  const tx = context.getStore();
  if (tx?.open) tx.afterCommit.push(fn);
  else await fn();
}

/** Undoes writes back to `savepoint` and writes again the raw writes made since `from`. Synchronous. */
function undoTo(tx: RequestTransaction, savepoint: string, from: number): void {
  tx.sqlite.exec(`ROLLBACK TO ${savepoint}`);
  for (const redo of tx.rawWrites.slice(from)) redo();
}

/**
 * Commits the mutation with what `write` adds (the audit record). When `write` or the commit
 * fails, the mutation is undone and the error thrown: the caller must then answer with an error.
 * Returns the errors of after-commit work (the mutation stands; they are for the log).
 */
export async function commitWith(tx: RequestTransaction, write: (conn: Db) => Promise<unknown>): Promise<unknown[]> {
  await closeForFinish(tx);
  try {
    await write(tx.conn);
  } catch (error) {
    finish(tx, () => {
      undoTo(tx, MUTATION, 0);
      tx.sqlite.exec('COMMIT');
    });
    throw error;
  }
  finish(tx, () => tx.sqlite.exec('COMMIT'));
  const failures: unknown[] = [];
  for (const fn of tx.afterCommit) {
    try {
      await fn();
    } catch (error) {
      failures.push(error);
    }
  }
  return failures;
}

/**
 * Undoes the mutation (a refused request: nothing it wrote stays) and commits what `write` adds
 * instead (the audit record of the refusal). Throws what `write` or the commit threw.
 */
export async function undoWith(tx: RequestTransaction, write: (conn: Db) => Promise<unknown>): Promise<void> {
  await closeForFinish(tx);
  finish(tx, () => undoTo(tx, MUTATION, 0), true);
  try {
    await write(tx.conn);
  } finally {
    finish(tx, () => tx.sqlite.exec('COMMIT'));
  }
}

/** Ends a transaction that was never finished (a response that never reached the audit hook). */
export async function abandon(tx: RequestTransaction): Promise<void> {
  if (!openOn.has(tx.sqlite) || openOn.get(tx.sqlite) !== tx) return;
  await closeForFinish(tx);
  finish(tx, () => {
    undoTo(tx, MUTATION, 0);
    tx.sqlite.exec('COMMIT');
  });
}

async function closeForFinish(tx: RequestTransaction): Promise<void> {
  // Nested transactions still running (work the handler did not wait for) end first, still inside.
  for (let queue = tx.nestedQueue; ; queue = tx.nestedQueue) {
    await queue.catch(() => undefined);
    if (queue === tx.nestedQueue) break;
  }
  tx.open = false;
}

/** Runs the synchronous end of a transaction; should it fail (a full disk refusing the commit), everything is rolled back. */
function finish(tx: RequestTransaction, end: () => void, keepOpen = false): void {
  try {
    end();
  } catch (error) {
    rollBackAll(tx);
    throw error;
  }
  if (!keepOpen) close(tx);
}

/** The last resort: roll everything back, then write the raw writes of others again, outside it. */
function rollBackAll(tx: RequestTransaction): void {
  try {
    if (tx.sqlite.inTransaction) tx.sqlite.exec('ROLLBACK');
    for (const redo of tx.rawWrites) {
      try {
        redo();
      } catch {
        // The database refuses writes; those records are lost, as they would have been without us.
      }
    }
  } finally {
    close(tx);
  }
}

function close(tx: RequestTransaction): void {
  if (openOn.get(tx.sqlite) === tx) {
    openOn.delete(tx.sqlite);
    if (--openCount === 0) context.disable();
  }
  tx.rawWrites.length = 0;
  tx.release();
}

/** `db.transaction()` inside a request transaction: a savepoint, one at a time; nested calls join the running one. */
function nestedBuilder(tx: RequestTransaction) {
  const builder = {
    setIsolationLevel: () => builder,
    setAccessMode: () => builder,
    execute: <T>(run: (trx: Transaction<Database>) => Promise<T>): Promise<T> => {
      const trx = tx.conn as unknown as Transaction<Database>;
      if (tx.nestedDepth > 0) return run(trx);
      const step = tx.nestedQueue
        .catch(() => undefined)
        .then(async () => {
          const name = `svcgw_nested_${++tx.savepoints}`;
          const from = tx.rawWrites.length;
          tx.sqlite.exec(`SAVEPOINT ${name}`);
          tx.nestedDepth++;
          try {
            const result = await run(trx);
            tx.sqlite.exec(`RELEASE ${name}`);
            return result;
          } catch (error) {
            undoTo(tx, name, from);
            tx.sqlite.exec(`RELEASE ${name}`);
            throw error;
          } finally {
            tx.nestedDepth--;
          }
        });
      tx.nestedQueue = step;
      return step;
    },
  };
  return builder;
}
