import { sql } from 'kysely';
import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { Config } from '../../../config/schema.js';
import type { Clock } from '../../../lib/clock.js';
import type { Db } from '../../../storage/database.js';
import type { Logger } from '../../../telemetry/logger.js';
import { ROLLUP_PERIODS } from '../../../storage/repositories/request-logs.js';
import type { ExportFiles } from '../exports/export-files.js';
import { runExclusive } from '../../../storage/job-lock.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** Rows per DELETE: short statements, so that the gateway's log writes never wait long. */
export const PURGE_BATCH_ROWS = 1000;

/** The first run after a start comes at most this late. */
const FIRST_RUN_MAX_DELAY_MS = 5 * 60 * 1000;

export interface RetentionRun {
  logsDeleted: number;
  feedbackDeleted: number;
  exportsDeleted: number;
  /** Rows of the rollup tables (full, key, metadata and narrow). */
  rollupRowsDeleted: number;
}

export interface RetentionDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'log_retention_display' | 'metrics_retention_display' | 'retention_interval_ms'>;
  /** Where export files are (<data_dir>/exports). */
  exportFiles: ExportFiles;
}

/** Deletes up to `PURGE_BATCH_ROWS` rows a statement, yielding between statements, until none is left. */
async function deleteInBatches(db: Db, table: string, key: string, where: ReturnType<typeof sql>): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result =
      await sql`delete from ${sql.table(table)} where (${sql.raw(key)}) in (select ${sql.raw(key)} from ${sql.table(table)} where ${where} limit ${PURGE_BATCH_ROWS})`.execute(
        db,
      );
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < PURGE_BATCH_ROWS) return deleted;
    await yieldToRequests();
  }
}

/** Primary keys of the rollup tables (WITHOUT ROWID: rows are deleted by key). */
const ROLLUP_KEYS = {
  analytics_rollups:
    'organisation_id, period, period_start, workspace_id, api_key_id, provider, credential_source, model, config_id, prompt_id, status_code',
  analytics_key_rollups: 'organisation_id, period, period_start, workspace_id, api_key_id',
  analytics_metadata_rollups:
    'organisation_id, metadata_key, metadata_value, period, period_start, workspace_id, api_key_id, provider, credential_source, model, config_id, prompt_id, status_code, guardrail_verdict',
  analytics_narrow_rollups:
    'organisation_id, metadata_key, metadata_value, dimension, value, period, period_start, workspace_id',
};

/**
 * Retention: deletes the request logs older than LOG_RETENTION_DISPLAY days, with their feedback
 * and log exports, and the analytics rollups of the UTC days before the one METRICS_RETENTION_DISPLAY
 * days ago (a week goes once its last day has). Rollups are written with the logs, so deleting
 * logs never loses a figure that analytics show. Runs every `retention_interval_ms` on the
 * server; `runOnce` reads the injected clock.
 */
export function createRetentionWorker(deps: RetentionDeps) {
  const logger = deps.logger.child({ component: 'retention' });
  let timer: NodeJS.Timeout | null = null;
  let first: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;

  /** One run; all zero when another instance was running it (one instance at a time, storage/job-lock.ts). */
  async function runOnce(): Promise<RetentionRun> {
    const done = await runExclusive(deps.db, 'retention', purge);
    return done.ran ? done.value : { logsDeleted: 0, feedbackDeleted: 0, exportsDeleted: 0, rollupRowsDeleted: 0 };
  }

  async function purge(): Promise<RetentionRun> {
    const now = deps.clock.now();
    const run: RetentionRun = { logsDeleted: 0, feedbackDeleted: 0, exportsDeleted: 0, rollupRowsDeleted: 0 };
    const cutoff = new Date(now - deps.config.log_retention_display * DAY_MS).toISOString();
    // The first hour of the first UTC day whose rollups are kept.
    const rollupCutoffHour = Math.floor((now - deps.config.metrics_retention_display * DAY_MS) / DAY_MS) * 24;
    const organisations = await deps.db.selectFrom('organisations').select('id').execute();
    // Per organisation, so that each batch is a range of an index that starts with organisation_id.
    for (const { id } of organisations) {
      run.logsDeleted += await deleteInBatches(
        deps.db,
        'request_logs',
        'seq',
        sql`organisation_id = ${id} and created_at < ${cutoff}`,
      );
      for (const [table, key] of Object.entries(ROLLUP_KEYS)) {
        for (const period of ROLLUP_PERIODS) {
          run.rollupRowsDeleted += await deleteInBatches(
            deps.db,
            table,
            key,
            sql`organisation_id = ${id} and period = ${period} and period_start <= ${rollupCutoffHour - period}`,
          );
        }
      }
    }
    run.feedbackDeleted = await deleteInBatches(deps.db, 'feedback', 'id', sql`created_at < ${cutoff}`);
    run.exportsDeleted = await purgeExports(cutoff);
    if (run.logsDeleted + run.feedbackDeleted + run.exportsDeleted + run.rollupRowsDeleted > 0)
      logger.info(run, 'retention run');
    return run;
  }

  /** Exports hold copies of logs: past the logs' retention, they and their files go too. */
  async function purgeExports(cutoff: string): Promise<number> {
    const old = await deps.db
      .selectFrom('log_exports')
      .select('id')
      .where('created_at', '<', cutoff)
      .where('status', '!=', 'in_progress')
      .execute();
    for (const { id } of old) {
      await deps.exportFiles.remove(id);
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
