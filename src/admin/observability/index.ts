import type { ZodApp } from '../../server/zod-app.js';
import type { ObservabilityDeps } from './deps.js';

/**
 * Feedback, traces, log exports, metrics and retention. Returns what runs in the background
 * (started and stopped by the server).
 */
export function registerObservability(_app: ZodApp, _deps: ObservabilityDeps): { start(): void; stop(): Promise<void> } {
  return { start() {}, async stop() {} };
}
