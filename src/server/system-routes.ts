import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ZodApp } from '../http/zod-app.js';
import { VERSION } from '../lib/version.js';

/** Liveness and the OpenAPI document: public, outside every feature. */
export function registerSystemRoutes(zapp: ZodApp, app: FastifyInstance): void {
  zapp.get(
    '/v1/health',
    {
      schema: {
        tags: ['System'],
        summary: 'Liveness check (no authentication)',
        security: [],
        response: { 200: z.object({ status: z.literal('ok'), version: z.string() }) },
      },
      config: { auth: { public: true } },
    },
    async () => ({ status: 'ok' as const, version: VERSION }),
  );
  zapp.get(
    '/v1/openapi.json',
    {
      schema: { hide: true },
      config: { auth: { public: true } },
    },
    async () => app.openApiDocument(),
  );
}
