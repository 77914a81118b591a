import type { ZodApp } from '../../server/zod-app.js';
import type { ObservabilityDeps } from '../observability/deps.js';

/** Analytics (summary, time series, grouped) and grouped logs. */
export function registerAnalytics(_app: ZodApp, _deps: ObservabilityDeps): void {}
