import type { ZodApp } from '../../server/zod-app.js';
import type { ObservabilityDeps } from '../observability/deps.js';
import { LogStore } from './log-store.js';
import { registerAnalyticsRoutes } from './routes.js';

/**
 * Analytics (summary, time series, grouped) and grouped logs. The store of log figures starts
 * loading once the server is ready, in chunks, so that the first query does not pay for it.
 */
export function registerAnalytics(app: ZodApp, deps: ObservabilityDeps): void {
  const store = new LogStore({ db: deps.db, clock: deps.clock, retentionDays: deps.config.log_retention_display });
  registerAnalyticsRoutes(app, deps, store);
  app.addHook('onReady', async () => {
    store.sync().catch((error: unknown) => deps.logger.warn({ err: error }, 'analytics: loading request logs failed; retried on the next query'));
  });
}
