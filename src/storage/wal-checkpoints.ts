/**
 * WAL checkpoints of a SQLite file on a worker thread. A checkpoint copies the WAL's pages into
 * the database file and, with `synchronous=NORMAL`, waits for two fsyncs: 4–6 ms each on the
 * benchmark machine's disk. SQLite runs it inside the commit that fills the WAL past 1000 pages,
 * so under load the event loop stopped for ~10 ms every second or so, and every request in
 * flight with it (docs/benchmarks.md, sixteenth pass). Here a worker with its own connection runs
 * PASSIVE checkpoints (they never wait for readers or writers) and the server's connection makes
 * none; if the worker fails, that connection checkpoints again as before.
 *
 * The server starts one unless `sqlite_checkpoint_worker` is off (a second V8 isolate is 8–10 MB
 * resident), and only once the WAL has grown past `startAtWalBytes`: a server that writes little
 * does not pay for the thread.
 */
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { startEvalWorker } from '../lib/eval-worker.js';

/** What `PRAGMA wal_checkpoint` says: frames in the WAL, and how many of them are in the file now. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

export type CheckpointLog = (level: 'info' | 'warn', fields: Record<string, unknown>, message: string) => void;

export interface WalCheckpointOptions {
  log: CheckpointLog;
  /** The shortest time between two of the worker's checkpoints. */
  intervalMs?: number;
  /** The longest (a server that writes little, or nothing). */
  maxIntervalMs?: number;
  /** How often the WAL's size is looked at until the worker starts (0: only when `watch()` is called). */
  watchMs?: number;
  /** The WAL size from which a worker is worth its thread. */
  startAtWalBytes?: number;
  /** WAL frames from which a checkpoint waits for the writer, so that the WAL starts over. */
  restartAtFrames?: number;
  /** Starts the worker (tests give one that fails). */
  spawn?: (data: CheckpointWorkerData) => Worker;
}

export interface CheckpointWorkerData {
  /** better-sqlite3's entry point, resolved here: the worker's code is evaluated, not a file. */
  driver: string;
  file: string;
  /** WAL frames (pages) from which the worker waits for the writer to start the WAL over. */
  restartAtFrames: number;
  /** How long it waits for the writer then (its connection's busy timeout). */
  restartWaitMs: number;
}

export type CheckpointState = 'waiting' | 'starting' | 'running' | 'inline' | 'stopped';

export interface WalCheckpoints {
  readonly state: CheckpointState;
  /** Starts the worker if the WAL has grown past the threshold (what the watch timer calls). */
  watch(): Promise<void>;
  /** One checkpoint by the worker, now; null when no worker runs. */
  checkpointNow(): Promise<CheckpointResult | null>;
  /** Ends the worker (before the database is closed). */
  stop(): Promise<void>;
}

export const DEFAULT_CHECKPOINT_INTERVAL_MS = 1_000;
export const DEFAULT_MAX_CHECKPOINT_INTERVAL_MS = 30_000;
/**
 * New WAL frames per checkpoint the rounds aim at: SQLite's own autocheckpoint. Each time the WAL
 * starts over, the server's next commit syncs the WAL's header on the event loop (1.5–4.4 ms here):
 * a checkpoint every second made that once a second at any rate, where SQLite's own made it once
 * per 1,000 frames (every ~9 s in the soak, at 50 requests/s).
 */
export const FRAMES_PER_CHECKPOINT = 1_000;
export const DEFAULT_WATCH_MS = 5_000;
export const DEFAULT_START_AT_WAL_BYTES = 4 * 1024 * 1024;
/** 32 MB of 8 KiB pages: four times the WAL at which SQLite would have checkpointed by itself. */
export const DEFAULT_RESTART_AT_FRAMES = 4096;
/** Passive checkpoints per round at most: each copies only what was committed during the one before. */
const CATCH_UP_PASSES = 3;
const RESTART_WAIT_MS = 100;
/** How long a stopping worker may take to close its connection before it is terminated. */
const STOP_LIMIT_MS = 2_000;

// The worker checkpoints when asked (the server paces the rounds: nextCheckpointDelay); an error
// ends it (the server then checkpoints on its own connection again). SQLite starts the WAL over
// only at a write that finds every frame checkpointed, and under steady writes a commit lands
// during every passive checkpoint (which copies the frames there were when it began): the WAL grew
// to 120 MB in a minute of guarded streams. So the worker makes a few more passes while frames
// keep coming, each copying only those, and once the WAL holds `restartAtFrames` it waits for the
// writer and holds new ones back until the WAL can start over (RESTART): the server's next commit
// may then wait for one short sync, once per that many frames instead of every 1,000.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.restartWaitMs);
const checkpoint = () => {
  let result = db.pragma('wal_checkpoint(PASSIVE)')[0];
  for (let pass = 1; pass < ${CATCH_UP_PASSES}; pass++) {
    const next = db.pragma('wal_checkpoint(PASSIVE)')[0];
    const caughtUp = next.log === result.log;
    result = next;
    if (caughtUp) break;
  }
  if (result.log >= workerData.restartAtFrames) result = db.pragma('wal_checkpoint(RESTART)')[0];
  return result;
};
parentPort.on('message', (message) => {
  if (message === 'now') parentPort.postMessage({ kind: 'checkpoint', result: checkpoint() });
  else if (message === 'stop') {
    db.close();
    parentPort.close();
  }
});
parentPort.postMessage({ kind: 'ready' });
`;

/** Starts the worker of WORKER_SOURCE. */
export function spawnCheckpointWorker(data: CheckpointWorkerData): Worker {
  return startEvalWorker(WORKER_SOURCE, {
    workerData: data,
    // It holds a connection: a small heap is plenty.
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
  });
}

/**
 * How long after a checkpoint that found `framesInWal` frames, `sinceLastMs` after the one before,
 * the next one is due: when ~FRAMES_PER_CHECKPOINT more have come at that rate, within the bounds.
 * The WAL's frames since it last started over are about those written since the last round (it
 * starts over at the first write after a checkpoint that copied everything); where it could not
 * start over, they count older frames too and the next round comes sooner. A WAL that stays as it
 * was (no writes) pushes the rounds apart until the longest interval.
 */
export function nextCheckpointDelay(
  framesInWal: number,
  sinceLastMs: number,
  bounds: { minMs: number; maxMs: number },
): number {
  if (framesInWal <= 0) return bounds.maxMs;
  const framesPerMs = framesInWal / Math.max(1, sinceLastMs);
  return Math.min(bounds.maxMs, Math.max(bounds.minMs, FRAMES_PER_CHECKPOINT / framesPerMs));
}

export function startWalCheckpoints(sqlite: SQLite.Database, options: WalCheckpointOptions): WalCheckpoints {
  const minMs = options.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;
  const bounds = { minMs, maxMs: Math.max(minMs, options.maxIntervalMs ?? DEFAULT_MAX_CHECKPOINT_INTERVAL_MS) };
  const watchMs = options.watchMs ?? DEFAULT_WATCH_MS;
  const startAt = options.startAtWalBytes ?? DEFAULT_START_AT_WAL_BYTES;
  const restartAtFrames = options.restartAtFrames ?? DEFAULT_RESTART_AT_FRAMES;
  const spawn = options.spawn ?? spawnCheckpointWorker;
  const file = sqlite.name;
  /** The connection's own setting, given back when the worker fails. */
  const inlineEvery = sqlite.pragma('wal_autocheckpoint', { simple: true }) as number;

  let state: CheckpointState = 'waiting';
  let worker: Worker | null = null;
  /** Callers of checkpointNow, answered in the order they asked. */
  const asked: Array<(result: CheckpointResult | null) => void> = [];
  let exited: Promise<void> = Promise.resolve();
  let round: NodeJS.Timeout | null = null;
  let lastRoundAt = 0;

  const watcher = watchMs > 0 ? setInterval(() => void watch(), watchMs) : null;
  watcher?.unref();

  async function watch(): Promise<void> {
    if (state !== 'waiting') return;
    const size = await stat(`${file}-wal`).then(
      (found) => found.size,
      () => 0,
    );
    if (size >= startAt && state === 'waiting') start();
  }

  function start(): void {
    if (watcher) clearInterval(watcher);
    state = 'starting';
    let started: Worker;
    try {
      started = spawn({
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        file,
        restartAtFrames,
        restartWaitMs: RESTART_WAIT_MS,
      });
    } catch (error) {
      return fallBack(error);
    }
    worker = started;
    started.unref();
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    started.on('message', (message: { kind: string; result?: CheckpointResult }) => {
      if (message.kind === 'ready' && state === 'starting') {
        // From now on the worker alone checkpoints.
        sqlite.pragma('wal_autocheckpoint = 0');
        state = 'running';
        lastRoundAt = performance.now();
        nextRound(bounds.minMs);
        options.log('info', { file, interval_ms: bounds.minMs }, 'WAL checkpoints run on a worker thread');
      } else if (message.kind === 'checkpoint') asked.shift()?.(message.result ?? null);
    });
    started.on('error', (error: unknown) => fallBack(error));
    started.on('exit', (code: number) => {
      if (state === 'starting' || state === 'running') fallBack(new Error(`the worker exited with code ${code}`));
    });
  }

  /** The next of the worker's own rounds, `delayMs` from now; each round sets the one after. */
  function nextRound(delayMs: number): void {
    round = setTimeout(() => {
      void checkpointNow().then((result) => {
        if (result === null || state !== 'running') return;
        const now = performance.now();
        nextRound(nextCheckpointDelay(result.log, now - lastRoundAt, bounds));
        lastRoundAt = now;
      });
    }, delayMs);
    round.unref();
  }

  function checkpointNow(): Promise<CheckpointResult | null> {
    if (state !== 'running' || worker === null) return Promise.resolve(null);
    const running = worker;
    return new Promise((resolve) => {
      asked.push(resolve);
      running.postMessage('now');
    });
  }

  function fallBack(error: unknown): void {
    if (state === 'inline' || state === 'stopped') return;
    state = 'inline';
    worker = null;
    if (round) clearTimeout(round);
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${inlineEvery}`);
    answerAll();
    options.log(
      'warn',
      { file, err: error instanceof Error ? error.message : String(error) },
      'the WAL checkpoint worker failed; checkpoints run on the event loop again',
    );
  }

  /** Answers every waiting caller with null: no worker will. */
  function answerAll(): void {
    for (const answer of asked.splice(0)) answer(null);
  }

  return {
    get state() {
      return state;
    },
    watch,
    checkpointNow,
    async stop() {
      if (watcher) clearInterval(watcher);
      if (round) clearTimeout(round);
      const running = worker;
      const was = state;
      state = 'stopped';
      worker = null;
      answerAll();
      if (running === null) return;
      if (was === 'running' && sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${inlineEvery}`);
      running.postMessage('stop');
      const limit = setTimeout(() => void running.terminate(), STOP_LIMIT_MS);
      await exited;
      clearTimeout(limit);
    },
  };
}
