import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DATABASE_FILE, openSqlite, rawSqlite } from '../../../src/storage/database.js';
import {
  FRAMES_PER_CHECKPOINT,
  nextCheckpointDelay,
  spawnCheckpointWorker,
  startWalCheckpoints,
  type CheckpointLog,
  type WalCheckpoints,
} from '../../../src/storage/wal-checkpoints.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Logged {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

/** A fresh database with one table, and the checkpoints of its file (rounds on a timer only when a test asks). */
function setUp(options: { spawn?: typeof spawnCheckpointWorker; restartAtFrames?: number; intervalMs?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-wal-'));
  const sqlite = rawSqlite(openSqlite(dir))!;
  sqlite.exec('CREATE TABLE notes (n INTEGER PRIMARY KEY, text TEXT NOT NULL)');
  const logged: Logged[] = [];
  const log: CheckpointLog = (level, fields, message) => void logged.push({ level, fields, message });
  const checkpoints = startWalCheckpoints(sqlite, {
    log,
    watchMs: 0,
    startAtWalBytes: 256 * 1024,
    // Only checkpointNow() checkpoints during a test, unless it asks for rounds of the worker's own.
    intervalMs: options.intervalMs ?? 3_600_000,
    maxIntervalMs: options.intervalMs ?? 3_600_000,
    ...(options.spawn ? { spawn: options.spawn } : {}),
    ...(options.restartAtFrames ? { restartAtFrames: options.restartAtFrames } : {}),
  });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(async () => {
    await checkpoints.stop();
    // Closed by hand: kysely closes only a connection it has used itself.
    if (sqlite.open) sqlite.close();
  });
  let next = 0;
  /** `count` rows of ~8 KB each, one transaction. */
  const write = (count: number) =>
    sqlite.transaction(() => {
      const insert = sqlite.prepare('INSERT INTO notes (n, text) VALUES (?, ?)');
      for (let i = 0; i < count; i++) insert.run(next++, 'x'.repeat(8000));
    })();
  return { dir, sqlite, checkpoints, logged, write, rows: () => next };
}

/** A WAL file: a 32-byte header, then per frame a 24-byte header and an 8 KiB page. */
const WAL_HEADER_BYTES = 32;
const WAL_FRAME_BYTES = 24 + 8192;

const autocheckpoint = (sqlite: SQLite.Database) => sqlite.pragma('wal_autocheckpoint', { simple: true });

/** The rows of `notes` in the database file alone, as a copy without its WAL shows them. */
function rowsInFile(dir: string): number {
  const copy = join(dir, `copy-${Math.random().toString(36).slice(2)}.sqlite`);
  copyFileSync(join(dir, DATABASE_FILE), copy);
  const alone = new SQLite(copy);
  try {
    const hasTable = alone.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'notes'").pluck().get();
    return hasTable === 0 ? 0 : (alone.prepare('SELECT count(*) FROM notes').pluck().get() as number);
  } finally {
    alone.close();
  }
}

async function untilRunning(checkpoints: WalCheckpoints) {
  await vi.waitFor(() => expect(checkpoints.state).toBe('running'), { timeout: 10_000, interval: 20 });
}

describe('WAL checkpoints on a worker thread', () => {
  it('starts no worker while the WAL is small', async () => {
    const { sqlite, checkpoints, write } = setUp();
    write(2);
    await checkpoints.watch();
    expect(checkpoints.state).toBe('waiting');
    expect(autocheckpoint(sqlite)).toBe(1000);
    expect(await checkpoints.checkpointNow()).toBeNull();
  });

  it('once the WAL has grown, the worker checkpoints and the connection no longer does', async () => {
    const { dir, sqlite, checkpoints, logged, write, rows } = setUp();
    write(40); // ~320 KB of WAL
    await checkpoints.watch();
    await untilRunning(checkpoints);
    expect(autocheckpoint(sqlite)).toBe(0);
    expect(logged).toEqual([
      expect.objectContaining({ level: 'info', message: 'WAL checkpoints run on a worker thread' }),
    ]);

    // Past SQLite's 1000 pages: the connection alone would have checkpointed inside this commit.
    write(1100);
    expect(rowsInFile(dir)).toBeLessThan(rows());
    const result = await checkpoints.checkpointNow();
    expect(result).not.toBeNull();
    expect(result!.log).toBeGreaterThan(1000);
    expect(result!.checkpointed).toBe(result!.log);
    // Every row is in the database file itself now.
    expect(rowsInFile(dir)).toBe(rows());

    await checkpoints.stop();
    expect(checkpoints.state).toBe('stopped');
    expect(autocheckpoint(sqlite)).toBe(1000);
  });

  it('runs rounds of its own while the server writes', async () => {
    const { dir, checkpoints, write, rows } = setUp({ intervalMs: 20 });
    write(40);
    await checkpoints.watch();
    await untilRunning(checkpoints);
    // Nothing here asks for a checkpoint: the rows reach the file by the worker's rounds alone.
    await vi.waitFor(() => expect(rowsInFile(dir)).toBe(rows()), { timeout: 10_000, interval: 20 });
    write(30);
    await vi.waitFor(() => expect(rowsInFile(dir)).toBe(rows()), { timeout: 10_000, interval: 20 });
    expect(rows()).toBe(70);
  });

  it('under steady writes, starts the WAL over rather than letting it grow', async () => {
    const { dir, checkpoints, write } = setUp({ restartAtFrames: 256 });
    write(40);
    await checkpoints.watch();
    await untilRunning(checkpoints);
    // Each round's rows are committed while the worker checkpoints: a passive checkpoint alone
    // copies what was there when it began, and the WAL would never start over.
    for (let round = 0; round < 20; round++) {
      const asked = checkpoints.checkpointNow();
      write(100);
      await asked;
    }
    write(1);
    const frames = (statSync(join(dir, `${DATABASE_FILE}-wal`)).size - WAL_HEADER_BYTES) / WAL_FRAME_BYTES;
    // 2,000 rows went by; the WAL holds at most the bound and the rounds around it.
    expect(frames).toBeLessThan(256 + 300);
  });

  it('a worker that cannot start leaves checkpoints to the connection, and says so', async () => {
    const { dir, sqlite, checkpoints, logged, write, rows } = setUp({
      spawn: () => new Worker("throw new Error('no driver here')", { eval: true }),
    });
    write(40);
    await checkpoints.watch();
    await vi.waitFor(() => expect(checkpoints.state).toBe('inline'), { timeout: 10_000, interval: 20 });
    expect(autocheckpoint(sqlite)).toBe(1000);
    expect(logged).toEqual([
      {
        level: 'warn',
        fields: expect.objectContaining({ err: expect.stringContaining('no driver here') }),
        message: 'the WAL checkpoint worker failed; checkpoints run on the event loop again',
      },
    ]);
    expect(await checkpoints.checkpointNow()).toBeNull();
    // The connection checkpoints by itself again: past 1000 pages, the commit does it.
    write(1100);
    expect(rowsInFile(dir)).toBe(rows());
  });

  it('a worker that ends by itself hands checkpoints back to the connection', async () => {
    const spawned: Worker[] = [];
    const { sqlite, checkpoints, logged, write } = setUp({
      spawn: (data) => {
        const worker = spawnCheckpointWorker(data);
        spawned.push(worker);
        return worker;
      },
    });
    write(40);
    await checkpoints.watch();
    await untilRunning(checkpoints);
    await spawned[0]!.terminate();
    await vi.waitFor(() => expect(checkpoints.state).toBe('inline'), { timeout: 10_000, interval: 20 });
    expect(autocheckpoint(sqlite)).toBe(1000);
    expect(logged.map((line) => line.level)).toEqual(['info', 'warn']);
  });

  it('stops cleanly before and after the worker started, and the WAL goes when the database closes', async () => {
    const { dir, sqlite, checkpoints, write } = setUp();
    await checkpoints.stop();
    expect(checkpoints.state).toBe('stopped');
    await checkpoints.watch();
    expect(checkpoints.state).toBe('stopped');

    const again = setUp();
    again.write(40);
    await again.checkpoints.watch();
    await untilRunning(again.checkpoints);
    again.write(10);
    await again.checkpoints.stop();
    again.sqlite.close();
    // The worker's connection was closed before the server's: the last one out removed the WAL.
    expect(existsSync(join(again.dir, `${DATABASE_FILE}-wal`))).toBe(false);
    const reopened = new SQLite(join(again.dir, DATABASE_FILE), { readonly: true });
    expect(reopened.prepare('SELECT count(*) FROM notes').pluck().get()).toBe(again.rows());
    reopened.close();

    write(1);
    sqlite.close();
    expect(existsSync(join(dir, `${DATABASE_FILE}-wal`))).toBe(false);
  });
});

describe('the pace of the worker’s checkpoints', () => {
  const bounds = { minMs: 1_000, maxMs: 30_000 };

  it('comes every second under heavy writes, and when ~1,000 frames have come under lighter ones', () => {
    // 3,000 guarded requests a second write ~2,000 frames a second.
    expect(nextCheckpointDelay(2_000, 1_000, bounds)).toBe(1_000);
    // 40 frames a second (~60 guarded requests): the next round when 1,000 more have come, as
    // SQLite's own checkpoint would come.
    expect(nextCheckpointDelay(400, 10_000, bounds)).toBe((FRAMES_PER_CHECKPOINT / 40) * 1_000);
    expect(nextCheckpointDelay(500, 10_000, bounds)).toBe(20_000);
  });

  it('draws the rounds apart while nothing is written, up to the longest interval', () => {
    // The WAL keeps what it held: each round finds the same frames over a longer time.
    let delay = 1_000;
    const delays: number[] = [];
    for (let round = 0; round < 6; round++) {
      delay = nextCheckpointDelay(300, delay, bounds);
      delays.push(delay);
    }
    expect(delays.map(Math.round)).toEqual([3_333, 11_111, 30_000, 30_000, 30_000, 30_000]);
    expect(nextCheckpointDelay(0, 1_000, bounds)).toBe(30_000);
  });
});
