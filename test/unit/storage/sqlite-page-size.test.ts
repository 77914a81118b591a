import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DATABASE_FILE,
  SQLITE_PAGE_SIZE,
  migrateToLatest,
  openSqlite,
  rawSqlite,
} from '../../../src/storage/database.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-pages-'));
  dirs.push(dir);
  return dir;
}

const pageSize = (db: ReturnType<typeof openSqlite>) => rawSqlite(db)!.pragma('page_size', { simple: true });

describe('SQLite page size', () => {
  it('gives a new database 8 KiB pages, in WAL mode, and keeps them when it is opened again', async () => {
    expect(SQLITE_PAGE_SIZE).toBe(8192);
    const dataDir = newDataDir();
    const db = openSqlite(dataDir);
    await migrateToLatest(db);
    expect(pageSize(db)).toBe(8192);
    expect(rawSqlite(db)!.pragma('journal_mode', { simple: true })).toBe('wal');
    await db.destroy();

    const again = openSqlite(dataDir);
    expect(pageSize(again)).toBe(8192);
    await again.destroy();
  });

  it('opens a database made with 4 KiB pages as it is, its rows intact', async () => {
    const dataDir = newDataDir();
    const old = new SQLite(join(dataDir, DATABASE_FILE));
    old.pragma('page_size = 4096');
    old.pragma('journal_mode = WAL');
    old.exec("CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ('before')");
    old.close();

    const db = openSqlite(dataDir);
    expect(pageSize(db)).toBe(4096);
    expect(rawSqlite(db)!.prepare('SELECT v FROM kept').pluck().all()).toEqual(['before']);
    await migrateToLatest(db);
    rawSqlite(db)!.prepare("INSERT INTO kept VALUES ('after')").run();
    expect(rawSqlite(db)!.prepare('SELECT v FROM kept ORDER BY rowid').pluck().all()).toEqual(['before', 'after']);
    await db.destroy();
  });
});
