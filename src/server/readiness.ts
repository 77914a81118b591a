import { sql } from 'kysely';
import { z } from 'zod';
import type { Config } from '../config/schema.js';
import { AppError } from '../lib/errors.js';
import type { CounterStore } from '../limits/counter-store.js';
import type { Db } from '../storage/database.js';
import type { ZodApp } from '../http/zod-app.js';

/** How long a dependency may take to answer before the instance counts as not ready. */
export const READINESS_TIMEOUT_MS = 1000;

const readySchema = z.object({
  status: z.literal('ready'),
  checks: z.object({
    database: z.literal('ok'),
    redis: z.enum(['ok', 'not_configured', 'unreachable']),
  }),
});

/**
 * `GET /v1/ready`: whether this instance can serve gateway traffic now, for load balancers and
 * orchestrators (a Kubernetes readinessProbe); `/v1/health` stays the liveness check. 503 in the
 * one error body, naming what failed, when the database does not answer `SELECT 1` or the Redis
 * of `redis_url` does not answer PING within a second while `limits_on_store_failure` is
 * `closed` (every limited request would get 503). With `open`, requests still pass, so the
 * instance stays ready and the check says `unreachable`.
 */
export function registerReadiness(app: ZodApp, deps: { db: Db; store: CounterStore; config: Config }): void {
  app.get(
    '/v1/ready',
    {
      schema: {
        tags: ['System'],
        summary: 'Readiness check (no authentication): 503 while the database or a required Redis is unreachable',
        security: [],
        response: { 200: readySchema },
      },
      config: { auth: { public: true } },
    },
    async () => {
      const failures: string[] = [];
      try {
        await sql`SELECT 1`.execute(deps.db);
      } catch {
        failures.push('the database did not answer SELECT 1');
      }
      let redis: 'ok' | 'not_configured' | 'unreachable' = 'not_configured';
      if (deps.config.redis_url) {
        redis = await deps.store.ping(READINESS_TIMEOUT_MS).then(
          () => 'ok' as const,
          () => 'unreachable' as const,
        );
        if (redis === 'unreachable' && deps.config.limits_on_store_failure === 'closed')
          failures.push(`Redis (redis_url) did not answer PING within ${READINESS_TIMEOUT_MS} ms`);
      }
      if (failures.length > 0) throw new AppError('SERVICE_UNAVAILABLE', `Not ready: ${failures.join('; ')}.`);
      return { status: 'ready' as const, checks: { database: 'ok' as const, redis } };
    },
  );
}
