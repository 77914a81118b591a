import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { Clock } from '../../../lib/clock.js';
import type { Db } from '../../../storage/database.js';
import type { Logger } from '../../../telemetry/logger.js';
import { runExclusive } from '../../../storage/job-lock.js';
import { afterCommit } from '../../../storage/request-transaction.js';
import { isPostgres } from '../../../storage/postgres/open-postgres.js';
import { exportRecord, type ExportField } from './export-fields.js';
import type { ExportFiles } from './export-files.js';
import { matchingLogs, type ExportFilters } from './export-filters.js';
import type { ExportRow, ExportStore } from './export-store.js';

/** Rows read and written per step; between steps the event loop serves requests. */
export const EXPORT_BATCH_ROWS = 500;

/** How soon an instance that found another one running the exports looks again. */
const BUSY_RETRY_MS = 5_000;
/** How often an instance on PostgreSQL looks for exports nobody is running. */
const SWEEP_MS = 30_000;

/**
 * Runs started exports one after another in the background: each reads the matching logs in
 * batches by `seq` (up to the newest log when it was started, so that it ends under load),
 * appends them to the export's file (export-files.ts: `<data_dir>/exports/<id>.jsonl`, or the
 * database on PostgreSQL) and yields between batches.
 * A cancel is seen before the next batch. An export interrupted by a shutdown stays
 * `in_progress` and runs again from the start when the server next starts.
 */
export function createExportRunner(deps: {
  db: Db;
  store: ExportStore;
  files: ExportFiles;
  clock: Clock;
  logger: Logger;
  batchRows?: number;
}) {
  const logger = deps.logger.child({ component: 'log-exports' });
  const batchRows = deps.batchRows ?? EXPORT_BATCH_ROWS;
  const now = () => new Date(deps.clock.now()).toISOString();
  let running: Promise<void> | null = null;
  let pending = false;
  let stopped = true;

  async function runExport(row: ExportRow): Promise<void> {
    const fields = JSON.parse(row.requested_data) as ExportField[];
    const filters = JSON.parse(row.filters) as ExportFilters;
    const scope = {
      organisationId: row.organisation_id,
      workspaceId: row.workspace_id,
      ownerUserId: row.owner_user_id,
    };
    const file = await deps.files.create(row.id);
    let cursor = 0;
    let written = 0;
    let finished = false;
    try {
      for (;;) {
        if (stopped) return; // shutdown: stays in_progress, runs again at the next start
        if ((await deps.store.status(row.id)) !== 'in_progress') return; // cancelled
        const rows = await matchingLogs(deps.db, scope, filters)
          .selectAll()
          .where('seq', '>', cursor)
          .where('seq', '<=', row.until_seq)
          .orderBy('seq')
          .limit(batchRows)
          .execute();
        if (rows.length === 0) break;
        await file.append(rows.map((r) => `${JSON.stringify(exportRecord(r, fields))}\n`).join(''));
        cursor = rows.at(-1)!.seq;
        written += rows.length;
        await deps.store.update(row.id, { cursor_seq: cursor, rows_written: written, last_updated_at: now() });
        await yieldToRequests();
      }
      await file.finish();
      finished = await deps.store.transition(row.id, ['in_progress'], {
        status: 'success',
        rows_written: written,
        file_name: `${row.id}.jsonl`,
        finished_at: now(),
        last_updated_at: now(),
      });
      if (finished) logger.info({ exportId: row.id, rows: written }, 'log export complete');
    } catch (error) {
      logger.error({ err: error, exportId: row.id }, 'log export failed');
      await deps.store.transition(row.id, ['in_progress'], {
        status: 'failed',
        error: 'The export could not be written; see the server log.',
        finished_at: now(),
        last_updated_at: now(),
      });
    } finally {
      await file.close();
      if (!finished && !stopped) await deps.files.remove(row.id);
    }
  }

  async function drain(): Promise<void> {
    while (!stopped) {
      const [next] = await deps.store.inProgress();
      if (!next) return;
      await runExport(next);
    }
  }

  let retry: NodeJS.Timeout | null = null;
  let sweep: NodeJS.Timeout | null = null;

  /** Exports run on one instance at a time; another that is busy may just be finishing, so look again later. */
  async function drainExclusive(): Promise<void> {
    const done = await runExclusive(deps.db, 'log-exports', drain);
    if (done.ran || stopped || retry) return;
    retry = setTimeout(() => {
      retry = null;
      kick();
    }, BUSY_RETRY_MS);
    retry.unref();
  }

  function kick(): void {
    if (stopped) return;
    if (running) {
      pending = true;
      return;
    }
    running = drainExclusive()
      .catch((error: unknown) => logger.error({ err: error }, 'log export runner failed'))
      .finally(() => {
        running = null;
        if (pending) {
          pending = false;
          kick();
        }
      });
  }

  return {
    /** Begins running started exports, those left over from a previous run included. */
    start(): void {
      stopped = false;
      kick();
      // Several instances (PostgreSQL): an export left by an instance that died is taken over by another.
      if (isPostgres(deps.db) && !sweep) {
        sweep = setInterval(kick, SWEEP_MS);
        sweep.unref();
      }
    },
    /**
     * Picks up newly started exports, once the request that started one has committed: the
     * runner reads from its own connection, and on PostgreSQL (or under the instance lock) it
     * would not see the row before.
     */
    kick: () => void afterCommit(kick),
    /** Stops after the current batch. */
    async stop(): Promise<void> {
      stopped = true;
      if (retry) clearTimeout(retry);
      if (sweep) clearInterval(sweep);
      retry = null;
      sweep = null;
      await running;
    },
    /** Resolves once nothing is running (for tests). */
    idle: async (): Promise<void> => {
      while (running) await running;
    },
  };
}

export type ExportRunner = ReturnType<typeof createExportRunner>;
