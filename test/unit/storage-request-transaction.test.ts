import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { migrateToLatest, openSqlite, rawSqlite, type Db } from '../../src/storage/database.js';
import {
  afterCommit,
  beginRequestTransaction,
  commitWith,
  noteRawWrite,
  runInRequestTransaction,
  undoWith,
} from '../../src/storage/request-transaction.js';

async function openDb(): Promise<Db> {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-rtx-'));
  const db = openSqlite(dir);
  await migrateToLatest(db);
  onTestFinished(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  return db;
}

const now = new Date(0).toISOString();
const org = (id: string) => ({ id, name: id, created_at: now, last_updated_at: now });
const names = async (db: Db) =>
  (await db.selectFrom('organisations').select('id').orderBy('id').execute()).map((r) => r.id);

/** A write on the raw handle, as the request-log writer makes it. */
function rawWrite(db: Db, id: string): void {
  const sqlite = rawSqlite(db)!;
  const insert = () =>
    sqlite
      .prepare('INSERT INTO organisations (id, name, created_at, last_updated_at) VALUES (?, ?, ?, ?)')
      .run(id, id, now, now);
  insert();
  noteRawWrite(sqlite, insert);
}

describe('request transactions', () => {
  it('routes the request’s queries into its transaction and commits them with the record', async () => {
    const db = await openDb();
    const tx = await beginRequestTransaction(db);
    await runInRequestTransaction(tx, () => db.insertInto('organisations').values(org('a-change')).execute());
    let afterwards = false;
    await runInRequestTransaction(tx, () => afterCommit(() => (afterwards = true)));
    expect(afterwards).toBe(false);
    await commitWith(tx, (conn) => conn.insertInto('organisations').values(org('b-record')).execute());
    expect(afterwards).toBe(true);
    expect(await names(db)).toEqual(['a-change', 'b-record']);
  });

  it('undoes the change when the record fails, skips after-commit work, and keeps raw writes of others', async () => {
    const db = await openDb();
    const tx = await beginRequestTransaction(db);
    let afterwards = false;
    await runInRequestTransaction(tx, async () => {
      await db.insertInto('organisations').values(org('a-change')).execute();
      await afterCommit(() => (afterwards = true));
    });
    rawWrite(db, 'c-log');
    await expect(
      commitWith(tx, (conn) => conn.insertInto('organisations').values(org('a-change')).execute()),
    ).rejects.toThrow(/UNIQUE/);
    expect(afterwards).toBe(false);
    expect(await names(db)).toEqual(['c-log']);
  });

  it('undoes a refused change and commits its record alone', async () => {
    const db = await openDb();
    const tx = await beginRequestTransaction(db);
    await runInRequestTransaction(tx, () => db.insertInto('organisations').values(org('a-half-done')).execute());
    rawWrite(db, 'c-log');
    await undoWith(tx, (conn) => conn.insertInto('organisations').values(org('b-refusal')).execute());
    expect(await names(db)).toEqual(['b-refusal', 'c-log']);
  });

  it('runs db.transaction() inside as a savepoint: a failed one undoes only its own writes, raw writes kept', async () => {
    const db = await openDb();
    const tx = await beginRequestTransaction(db);
    await runInRequestTransaction(tx, async () => {
      await db.insertInto('organisations').values(org('a-before')).execute();
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.insertInto('organisations').values(org('x-nested')).execute();
          rawWrite(db, 'c-log');
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      await db.transaction().execute((trx) => trx.insertInto('organisations').values(org('d-nested-ok')).execute());
    });
    await commitWith(tx, async () => undefined);
    expect(await names(db)).toEqual(['a-before', 'c-log', 'd-nested-ok']);
  });

  it('makes other work wait for the connection instead of joining the transaction', async () => {
    const db = await openDb();
    const tx = await beginRequestTransaction(db);
    const outside = db.insertInto('organisations').values(org('z-outside')).execute();
    await runInRequestTransaction(tx, () => db.insertInto('organisations').values(org('a-change')).execute());
    await undoWith(tx, async () => undefined);
    await outside;
    expect(await names(db)).toEqual(['z-outside']);
  });
});
