import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { registerApiKeyRoutes } from '../admin/api-keys/routes.js';
import { createApiKeyAdminService } from '../admin/api-keys/service.js';
import { registerAuditLogRoutes } from '../admin/audit-logs/routes.js';
import { registerRateLimitPolicyRoutes } from '../admin/rate-limits-policies/routes.js';
import { createRateLimitPolicyService } from '../admin/rate-limits-policies/service.js';
import { registerWorkspaceRoutes } from '../admin/workspaces/routes.js';
import { createWorkspaceService } from '../admin/workspaces/service.js';
import { createApiKeyVerifier, type ApiKeyVerifier } from '../auth/api-key-service.js';
import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import { VERSION } from '../lib/version.js';
import type { Db } from '../storage/database.js';
import { createRepositories } from '../storage/repositories/index.js';
import type { Logger } from '../telemetry/logger.js';
import { registerAudit } from './plugins/audit.js';
import { registerAuth } from './plugins/auth.js';
import { registerErrorHandling } from './plugins/errors.js';
import { registerOpenApi } from './plugins/openapi.js';
import type { RouteAccess } from './route-config.js';

export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  clock: Clock;
}

export interface App {
  app: FastifyInstance;
  keys: ApiKeyVerifier;
  /** Every route with its declared access, in registration order. */
  routes: RouteAccess[];
}

/**
 * Node's server.close() closes only the connections idle at that moment; a keep-alive
 * connection whose request was still in flight would hold shutdown open until it timed out.
 * Once closing starts, every response asks the client to close its connection.
 */
function registerGracefulClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
  });
}

const REQUEST_ID_RE = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Assembles the server from its parts; nothing here listens or reads settings itself. */
export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Every gateway request gets a log record of its own; a pino line per request would only cost CPU.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.max_body_bytes,
    // A client's own request id is kept when it is sane, so that both sides can quote one id.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    return503OnClosing: true,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Admin routes take JSON only; anything else is a 415, not a confusing validation error.
  app.removeContentTypeParser('text/plain');

  const repos = createRepositories(deps.db);
  const keys = createApiKeyVerifier({ repo: repos.apiKeys, clock: deps.clock, ttlMs: deps.config.key_cache_ttl_ms });
  const routes: RouteAccess[] = [];

  registerErrorHandling(app);
  registerGracefulClose(app);
  await registerOpenApi(app, VERSION);
  registerAuth(app, { keys, routes });
  registerAudit(app, { repo: repos.auditLogs, clock: deps.clock });

  const zapp = app.withTypeProvider<ZodTypeProvider>();
  zapp.get('/v1/health', {
    schema: { tags: ['System'], summary: 'Liveness check (no authentication)', security: [], response: { 200: z.object({ status: z.literal('ok'), version: z.string() }) } },
    config: { auth: { public: true } },
  }, async () => ({ status: 'ok' as const, version: VERSION }));
  zapp.get('/v1/openapi.json', {
    schema: { hide: true },
    config: { auth: { public: true } },
  }, async () => app.swagger());

  const services = {
    apiKeys: createApiKeyAdminService({ keys: repos.apiKeys, workspaces: repos.workspaces, verifier: keys, clock: deps.clock }),
    workspaces: createWorkspaceService({ workspaces: repos.workspaces, clock: deps.clock }),
    rateLimitPolicies: createRateLimitPolicyService({ policies: repos.rateLimitPolicies, workspaces: repos.workspaces, clock: deps.clock }),
  };
  registerApiKeyRoutes(zapp, services.apiKeys);
  registerWorkspaceRoutes(zapp, services.workspaces);
  registerRateLimitPolicyRoutes(zapp, services.rateLimitPolicies);
  registerAuditLogRoutes(zapp, repos.auditLogs);

  await app.ready();
  return { app, keys, routes };
}
