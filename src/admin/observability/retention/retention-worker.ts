import { rm } from 'node:fs/promises';
import { sql } from 'kysely';
import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { Config } from '../../../config/schema.js';
import type { Clock } from '../../../lib/clock.js';
import type { Db } from '../../../storage/database.js';
import type { Logger } from '../../../telemetry/logger.js';
import { exportFilePath } from '../exports/export-runner.js';
import { DAY_MS, dayOf, rolledUpThrough, rollUpCompleteDays } from './daily-rollup.js';

/** Rows per DELETE: short statements, so that the gateway's log writes never wait long. */
export const PURGE_BATCH_ROWS = 1000;

/** The first run after a start comes at most this late. */
const FIRST_RUN_MAX_DELAY_MS = 5 * 60 * 1000;

export interface RetentionRun {
  /** Days added to the daily roll-up. */
  rolledUp: string[];
  logsDeleted: number;
  feedbackDeleted: number;
  exportsDeleted: number;
  dailyRowsDeleted: number;
}

export interface RetentionDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'log_retention_display' | 'metrics_retention_display' | 'retention_interval_ms'>;
  /** Where export files are (<data_dir>/exports). */
  exportsDir: string;
}

/** Deletes up to `PURGE_BATCH_ROWS` rows a statement, yielding between statements, until none is left. */
async function deleteInBatches(db: Db, table: 'request_logs' | 'feedback' | 'request_log_daily', key: 'seq' | 'id' | 'rowid', where: ReturnType<typeof sql>): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await sql`delete from ${sql.table(table)} where ${sql.ref(key)} in (select ${sql.ref(key)} from ${sql.table(table)} where ${where} limit ${PURGE_BATCH_ROWS})`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < PURGE_BATCH_ROWS) return deleted;
    await yieldToRequests();
  }
}

/**
 * Retention: rolls request logs up per day (`request_log_daily`), then deletes the logs older
 * than LOG_RETENTION_DISPLAY days, with their feedback and log exports, and the daily rows
 * older than METRICS_RETENTION_DISPLAY days. A log is never deleted before its day is rolled
 * up. Runs every `retention_interval_ms` on the server; `runOnce` reads the injected clock.
 */
export function createRetentionWorker(deps: RetentionDeps) {
  const logger = deps.logger.child({ component: 'retention' });
  let timer: NodeJS.Timeout | null = null;
  let first: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;

  async function runOnce(): Promise<RetentionRun> {
    const now = deps.clock.now();
    const rolledUp = await rollUpCompleteDays(deps.db, now);
    const through = await rolledUpThrough(deps.db);
    // Only whole days already rolled up may go.
    const logCutoffMs = Math.min(now - deps.config.log_retention_display * DAY_MS, through === null ? -Infinity : Date.parse(`${through}T00:00:00.000Z`) + DAY_MS);
    const run: RetentionRun = { rolledUp, logsDeleted: 0, feedbackDeleted: 0, exportsDeleted: 0, dailyRowsDeleted: 0 };
    if (Number.isFinite(logCutoffMs)) {
      const cutoff = new Date(logCutoffMs).toISOString();
      const organisations = await deps.db.selectFrom('organisations').select('id').execute();
      // Per organisation, so that each batch is a range of the (organisation_id, created_at) index.
      for (const { id } of organisations) {
        run.logsDeleted += await deleteInBatches(deps.db, 'request_logs', 'seq', sql`organisation_id = ${id} and created_at < ${cutoff}`);
      }
      run.feedbackDeleted = await deleteInBatches(deps.db, 'feedback', 'id', sql`created_at < ${cutoff}`);
      run.exportsDeleted = await purgeExports(cutoff);
    }
    const dayCutoff = dayOf(now - deps.config.metrics_retention_display * DAY_MS);
    run.dailyRowsDeleted = await deleteInBatches(deps.db, 'request_log_daily', 'rowid', sql`day < ${dayCutoff}`);
    if (run.logsDeleted + run.feedbackDeleted + run.exportsDeleted + run.dailyRowsDeleted + rolledUp.length > 0) logger.info(run, 'retention run');
    return run;
  }

  /** Exports hold copies of logs: past the logs' retention, they and their files go too. */
  async function purgeExports(cutoff: string): Promise<number> {
    const old = await deps.db.selectFrom('log_exports').select('id').where('created_at', '<', cutoff).where('status', '!=', 'in_progress').execute();
    for (const { id } of old) {
      await rm(exportFilePath(deps.exportsDir, id), { force: true });
      await deps.db.deleteFrom('log_exports').where('id', '=', id).execute();
    }
    return old.length;
  }

  function tick(): void {
    if (running) return;
    running = runOnce()
      .catch((error: unknown) => logger.error({ err: error }, 'retention run failed'))
      .finally(() => {
        running = null;
      });
  }

  return {
    runOnce,
    start(): void {
      if (timer !== null) return;
      // A server restarted more often than the interval still purges: the first run comes sooner.
      first = setTimeout(tick, Math.min(deps.config.retention_interval_ms, FIRST_RUN_MAX_DELAY_MS));
      first.unref();
      timer = setInterval(tick, deps.config.retention_interval_ms);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (first !== null) clearTimeout(first);
      if (timer !== null) clearInterval(timer);
      first = null;
      timer = null;
      await running;
    },
  };
}

export type RetentionWorker = ReturnType<typeof createRetentionWorker>;
