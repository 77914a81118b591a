import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { Db } from '../../storage/database.js';
import { runExclusive } from '../../storage/job-lock.js';
import { narrowBackfillStep } from '../../storage/repositories/narrow-backfill.js';
import type { Logger } from '../../telemetry/logger.js';

/** How soon after a start the backfill begins, and how often an unfinished one is taken up again. */
const INTERVAL_MS = 60_000;

/** Calls `tick` every `ms` until the returned function is called; tests pass one they fire themselves. */
export type Repeat = (tick: () => void, ms: number) => () => void;

const everyUnref: Repeat = (tick, ms) => {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
};

/**
 * Sums the rollups written before migration 0035 into narrow rollups, a day of period starts per
 * step, newest first (docs/analytics.md#narrow-rollups). One instance at a time
 * (storage/job-lock.ts); each step is its own transaction, so a run cut short (a kill, a
 * failure) resumes at the mark. Between steps the event loop serves requests.
 */
export function createNarrowBackfillWorker(deps: { db: Db; logger: Logger; repeat?: Repeat }) {
  const logger = deps.logger.child({ component: 'narrow-backfill' });
  const repeat = deps.repeat ?? everyUnref;
  let cancel: (() => void) | null = null;
  let running: Promise<unknown> | null = null;
  let done = false;
  // Set by stop(): the run ends after its current step (a shutdown must not wait for the rest).
  let stopping = false;

  /** Steps until nothing is left (or `goOn` says no); the number of steps (0 when another instance was running it). */
  async function run(goOn: () => boolean): Promise<number> {
    const ran = await runExclusive(deps.db, 'narrow-backfill', async () => {
      let steps = 0;
      while (goOn() && (await narrowBackfillStep(deps.db))) {
        steps++;
        await yieldToRequests();
      }
      return steps;
    });
    if (!ran.ran) return 0;
    done = goOn();
    if (ran.value > 0) logger.info({ steps: ran.value }, 'narrow rollups backfilled');
    return ran.value;
  }

  function tick(): void {
    if (running || done) return;
    running = run(() => !stopping)
      .catch((error: unknown) => logger.error({ err: error }, 'narrow rollups backfill failed'))
      .finally(() => {
        running = null;
      });
  }

  return {
    /** A whole run now, whatever stop() said (tests, operators' scripts). */
    runOnce: () => run(() => true),
    start(): void {
      if (cancel !== null) return;
      stopping = false;
      cancel = repeat(tick, INTERVAL_MS);
    },
    async stop(): Promise<void> {
      stopping = true;
      cancel?.();
      cancel = null;
      await running;
    },
  };
}

export type NarrowBackfillWorker = ReturnType<typeof createNarrowBackfillWorker>;
