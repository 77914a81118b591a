import { AsyncLocalStorage } from 'node:async_hooks';
import type SQLite from 'better-sqlite3';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import { andThen, type MaybePromise } from '../lib/maybe-promise.js';

type Db = Kysely<Database>;

/**
 * One request's database transaction: an admin mutation and its audit record commit together
 * or not at all. The request holds the one SQLite connection (kysely's mutex) from before its
 * handler runs until its audit record is written, so everything else waits for it: it must stay
 * short, and no upstream call may happen inside it.
 *
 * On SQLite, transaction control runs on the raw better-sqlite3 handle, synchronously, so that
 * nothing can slip in between two steps. Writes made on the raw handle by others meanwhile
 * (request-log batches) land inside this transaction; they register here and are written again
 * whenever the part of the transaction that holds them is undone, so that undoing a mutation
 * never loses them.
 *
 * On PostgreSQL the request holds one connection of the pool, and transaction control runs on it
 * (awaited, since nothing else uses that connection); other work goes on on the other connections
 * meanwhile, so nobody else's writes land inside it.
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
  /** The raw SQLite handle; null on PostgreSQL. */
  readonly sqlite: SQLite.Database | null;
  /** The database (as `withRequestTransactions` made it) the transaction belongs to. */
  readonly handle: StorageHandle;
  closed: boolean;
  readonly release: () => void;
}

/** What a database's request transactions run on: SQLite's raw handle, or PostgreSQL's pool (one held connection each). */
export type StorageHandle = { readonly sqlite: SQLite.Database } | { readonly postgres: true };

const context = new AsyncLocalStorage<RequestTransaction>();
/**
 * Request transactions open in this process. On Node 20 an enabled AsyncLocalStorage installs
 * promise hooks that slow every promise of the process (the gateway's too) by half; the context
 * is only needed while a transaction is open, so it is disabled whenever none is.
 */
let openCount = 0;
const roots = new WeakMap<Db, { root: Db; handle: StorageHandle }>();
/** The request transaction open on a SQLite connection, if any (at most one: it holds the connection). */
const openOn = new WeakMap<SQLite.Database, RequestTransaction>();

const MUTATION = 'svcgw_mutation';

/**
 * The database as the rest of the code sees it: inside a request transaction (same async
 * context) every query, `db.transaction()` included (as a savepoint), runs in it; elsewhere it
 * is the database itself.
 */
export function withRequestTransactions(root: Db, handle: StorageHandle): Db {
  const proxy = new Proxy(root, {
    get(target, property) {
      const tx = context.getStore();
      if (tx?.open && tx.handle === handle) {
        if (property === 'transaction') return () => nestedBuilder(tx);
        if (property === 'connection') return () => ({ execute: <T>(run: (db: Db) => Promise<T>) => run(tx.conn) });
        return bound(tx.conn, property);
      }
      return bound(target, property);
    },
  });
  roots.set(proxy, { root, handle });
  return proxy;
}

/** The database itself, also inside a request transaction: for writes that must not go with the request's (request logs). */
export const outsideRequestTransactions = (db: Db): Db => roots.get(db)?.root ?? db;

function bound(target: Db, property: string | symbol): unknown {
  const value: unknown = Reflect.get(target, property, target);
  return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
}

/** Begins a request transaction on the database (which must come from `withRequestTransactions`). */
export async function beginRequestTransaction(db: Db): Promise<RequestTransaction> {
  const opened = roots.get(db);
  if (!opened) throw new Error('request transactions need the database opened by openDatabase');
  const { root, handle } = opened;
  const sqlite = 'sqlite' in handle ? handle.sqlite : null;
  return new Promise<RequestTransaction>((resolve, reject) => {
    root
      .connection()
      .execute(
        (conn) =>
          new Promise<void>((release) => {
            const fail = (error: unknown) => {
              release();
              reject(error instanceof Error ? error : new Error(String(error)));
            };
            const open = () => {
              const tx: RequestTransaction = {
                conn,
                open: true,
                rawWrites: [],
                afterCommit: [],
                nestedQueue: Promise.resolve(),
                nestedDepth: 0,
                savepoints: 0,
                sqlite,
                handle,
                closed: false,
                release: () => release(),
              };
              if (sqlite) openOn.set(sqlite, tx);
              openCount++;
              resolve(tx);
            };
            if (sqlite) {
              try {
                sqlite.exec(`BEGIN; SAVEPOINT ${MUTATION}`);
              } catch (error) {
                fail(error);
                return;
              }
              open();
              return;
            }
            sql
              .raw('BEGIN')
              .execute(conn)
              .then(() => sql.raw(`SAVEPOINT ${MUTATION}`).execute(conn))
              .then(open, (error: unknown) =>
                sql
                  .raw('ROLLBACK')
                  .execute(conn)
                  .then(
                    () => fail(error),
                    () => fail(error),
                  ),
              );
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

/** A step done at once (SQLite) or a promise of it (PostgreSQL); `andThen` runs the next one accordingly. */
type Step = MaybePromise<void>;

/** A transaction-control statement: on the raw handle, synchronously (SQLite), or on the held connection (PostgreSQL). */
function control(tx: RequestTransaction, statement: string): Step {
  if (tx.sqlite) {
    tx.sqlite.exec(statement);
    return;
  }
  return sql
    .raw(statement)
    .execute(tx.conn)
    .then(() => undefined);
}

/** Undoes writes back to `savepoint` and writes again the raw writes made since `from` (synchronous on SQLite). */
function undoTo(tx: RequestTransaction, savepoint: string, from: number): Step {
  return andThen(control(tx, `ROLLBACK TO ${savepoint}`), () => {
    for (const redo of tx.rawWrites.slice(from)) redo();
  });
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
    await finish(tx, () => andThen(undoTo(tx, MUTATION, 0), () => control(tx, 'COMMIT')));
    throw error;
  }
  await finish(tx, () => control(tx, 'COMMIT'));
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
  await finish(tx, () => undoTo(tx, MUTATION, 0), true);
  try {
    await write(tx.conn);
  } finally {
    await finish(tx, () => control(tx, 'COMMIT'));
  }
}

/** Ends a transaction that was never finished (a response that never reached the audit hook). */
export async function abandon(tx: RequestTransaction): Promise<void> {
  if (tx.closed) return;
  await closeForFinish(tx);
  await finish(tx, () => andThen(undoTo(tx, MUTATION, 0), () => control(tx, 'COMMIT')));
}

async function closeForFinish(tx: RequestTransaction): Promise<void> {
  // Nested transactions still running (work the handler did not wait for) end first, still inside.
  for (let queue = tx.nestedQueue; ; queue = tx.nestedQueue) {
    await queue.catch(() => undefined);
    if (queue === tx.nestedQueue) break;
  }
  tx.open = false;
}

/**
 * Runs the end of a transaction (synchronously on SQLite); should it fail (a full disk refusing
 * the commit, a lost connection), everything is rolled back.
 */
function finish(tx: RequestTransaction, end: () => Step, keepOpen = false): Step {
  let ended: Step;
  try {
    ended = end();
  } catch (error) {
    // Only SQLite fails synchronously, and its roll-back is synchronous too.
    void rollBackAll(tx);
    throw error;
  }
  if (!ended) {
    if (!keepOpen) close(tx);
    return;
  }
  return ended.then(
    () => {
      if (!keepOpen) close(tx);
    },
    async (error: unknown) => {
      await rollBackAll(tx);
      throw error;
    },
  );
}

/** The last resort: roll everything back, then write the raw writes of others again, outside it. */
function rollBackAll(tx: RequestTransaction): Step {
  if (!tx.sqlite) {
    // A failed connection is dropped by the pool; a working one is handed back clean.
    return sql
      .raw('ROLLBACK')
      .execute(tx.conn)
      .then(
        () => close(tx),
        () => close(tx),
      );
  }
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
  if (!tx.closed) {
    tx.closed = true;
    if (tx.sqlite && openOn.get(tx.sqlite) === tx) openOn.delete(tx.sqlite);
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
          await control(tx, `SAVEPOINT ${name}`);
          tx.nestedDepth++;
          try {
            const result = await run(trx);
            await control(tx, `RELEASE ${name}`);
            return result;
          } catch (error) {
            await andThen(undoTo(tx, name, from), () => control(tx, `RELEASE ${name}`));
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
