import { join } from 'node:path';
import type { ZodApp } from '../../http/zod-app.js';
import type { ObservabilityDeps } from './deps.js';
import { exportFilesFor } from './exports/export-files.js';
import { createExportRunner, type ExportRunner } from './exports/export-runner.js';
import { registerExportRoutes } from './exports/export-routes.js';
import { createExportStore } from './exports/export-store.js';
import { registerFeedbackRoutes } from './feedback/feedback-routes.js';
import { createMetricsRegistry, type MetricsRegistry } from './metrics/metrics-registry.js';
import { registerMetricsRoute } from './metrics/metrics-route.js';
import { createNarrowBackfillWorker, type NarrowBackfillWorker } from '../analytics/narrow-backfill-worker.js';
import { createRetentionWorker, type RetentionWorker } from './retention/retention-worker.js';
import { isPostgres } from '../../storage/postgres/open-postgres.js';
import { registerTraceRoutes } from './traces/trace-routes.js';
import './tables.js';

export { createFeedbackStore, feedbackForTraces } from './feedback/feedback-store.js';
export { formatLog, LOG_FORMATS, type LogFormat } from './log-format.js';

/** What registerObservability hands the server: the background work, and its parts for tests. */
export interface Observability {
  start(): void;
  stop(): Promise<void>;
  retention: RetentionWorker;
  narrowBackfill: NarrowBackfillWorker;
  exports: ExportRunner;
  metrics: MetricsRegistry;
}

/**
 * Feedback, traces, log exports, metrics, retention and the narrow rollups' backfill. Routes are
 * registered now; the export runner, the retention worker and the backfill run between `start()`
 * (after listen) and `stop()` (on close).
 */
export function registerObservability(app: ZodApp, deps: ObservabilityDeps): Observability {
  const files = exportFilesFor(deps.db, join(deps.config.data_dir, 'exports'));
  const metrics = createMetricsRegistry();
  const unsubscribe = deps.requestLogs.onRecord(metrics.record);
  const exports = createExportRunner({
    db: deps.db,
    store: createExportStore(deps.db),
    files,
    clock: deps.clock,
    logger: deps.logger,
  });
  const retention = createRetentionWorker({
    db: deps.db,
    clock: deps.clock,
    logger: deps.logger,
    config: deps.config,
    exportFiles: files,
  });

  const narrowBackfill = createNarrowBackfillWorker({ db: deps.db, logger: deps.logger });

  registerFeedbackRoutes(app, { db: deps.db, clock: deps.clock });
  registerTraceRoutes(app, deps);
  registerExportRoutes(app, { ...deps, runner: exports, files });
  registerMetricsRoute(app, { config: deps.config, registry: metrics });

  return {
    start() {
      if (deps.features.enabled('data_exports')) exports.start();
      retention.start();
      // On SQLite a step runs on the event loop and held it for seconds (docs/analytics.md); its
      // full rollups answer within bounds there, so narrow rows serve windows from the upgrade on.
      if (isPostgres(deps.db)) narrowBackfill.start();
    },
    async stop() {
      unsubscribe();
      await Promise.all([exports.stop(), retention.stop(), narrowBackfill.stop()]);
    },
    retention,
    narrowBackfill,
    exports,
    metrics,
  };
}
