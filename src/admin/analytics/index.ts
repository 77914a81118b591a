import type { ZodApp } from '../../http/zod-app.js';
import { lazyService } from '../../lib/lazy.js';
import type { ObservabilityDeps } from '../observability/deps.js';
import { registerLogReadRoutes } from './log-read-routes.js';
import { parseRollupMetadataKeys, syncRollupMetadataKeys } from './metadata-keys.js';
import { markNarrowSince } from '../../storage/repositories/narrow-backfill.js';
import { registerAnalyticsRoutes } from './routes.js';
import './tables.js';

/**
 * Analytics (summary, time series, grouped) and grouped logs, read from the rollups that the
 * request-log repository maintains with every batch it writes (docs/analytics.md).
 */
export function registerAnalytics(app: ZodApp, deps: ObservabilityDeps): void {
  // The readers' modules are loaded by the first analytics request (issue #19).
  const reader = lazyService(async () => (await import('./reader.js')).createAnalyticsReader(deps.db));
  const keys = parseRollupMetadataKeys(deps.config.analytics_rollup_metadata_keys);
  app.addHook('onReady', async () => {
    await syncRollupMetadataKeys(deps.db, keys, deps.clock.now());
    await markNarrowSince(deps.db, deps.clock.now());
  });
  registerAnalyticsRoutes(app, deps, reader);
  registerLogReadRoutes(app, deps, {
    reader,
    logs: lazyService(async () => (await import('./log-analytics.js')).createLogAnalytics(deps.db)),
    feedback: lazyService(async () => (await import('./feedback-analytics.js')).createFeedbackAnalytics(deps.db)),
  });
}
