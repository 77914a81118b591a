import { createHash, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../../config/schema.js';
import { AppError } from '../../../lib/errors.js';
import { VERSION } from '../../../lib/version.js';
import { ADMIN_ONLY, type RouteAuth } from '../../../http/route-config.js';
import type { ZodApp } from '../../../http/zod-app.js';
import type { MetricsRegistry } from './metrics-registry.js';
import { renderProcessMetrics } from './process-metrics.js';

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const digest = (value: string) => createHash('sha256').update(value).digest();

/** Compares digests, which have one length, so that neither the length nor the content of the token leaks through timing. */
export function tokenMatches(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

function bearer(header: string | undefined): string | null {
  if (!header?.toLowerCase().startsWith('bearer ')) return null;
  return header.slice(7).trim() || null;
}

/**
 * `GET /metrics` in the Prometheus text format: the gateway's counters, then the process's CPU
 * and memory. Off (`metrics_enabled=false`): no route, so a 404. With `metrics_token` set,
 * scrapers send `Authorization: Bearer <token>` and no API key; otherwise an admin key with
 * `analytics.view` (the figures cover every workspace).
 */
export function registerMetricsRoute(
  app: ZodApp,
  deps: { config: Pick<Config, 'metrics_enabled' | 'metrics_token'>; registry: MetricsRegistry },
): void {
  if (!deps.config.metrics_enabled) return;
  const token = deps.config.metrics_token;
  const auth: RouteAuth = token ? { public: true } : { scope: 'analytics.view', keyTypes: ADMIN_ONLY };
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['System'],
        summary: 'Prometheus metrics of this instance',
        description:
          'Text exposition format 0.0.4. With the metrics_token setting, send `Authorization: Bearer <metrics_token>` instead of an API key.',
        ...(token ? { security: [] } : {}),
      },
      config: { auth },
    },
    async (request, reply) => {
      if (token) {
        const given = bearer(request.headers.authorization);
        if (given === null)
          throw new AppError('UNAUTHENTICATED', 'Missing metrics token: send Authorization: Bearer <metrics_token>.');
        if (!tokenMatches(given, token)) throw new AppError('INVALID_API_KEY', 'The metrics token is not valid.');
      }
      reply.header('content-type', CONTENT_TYPE).header('cache-control', 'no-store');
      return `${deps.registry.render({ version: VERSION })}${renderProcessMetrics()}\n`;
    },
  );
}
