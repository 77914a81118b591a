import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { UserStatusEvents } from '../auth/user-status.js';
import { createSessions } from '../admin/sso/index.js';
import { registerErrorHandling } from './plugins/errors.js';
import { registerObservability, type Observability } from '../admin/observability/index.js';
import { createHttpApp } from './http-app.js';
import { registerSystemRoutes } from './system-routes.js';
import { registerOrganisationAdmin } from './organisation-parts.js';
import { createJwtAuthenticatorFor } from './jwt-parts.js';
import { gatewayGuardrails } from './guardrail-parts.js';
import type { Dispatcher } from 'undici';
import { registerAuditLogRoutes } from '../admin/audit-logs/routes.js';
import { registerConfigs } from '../admin/configs/index.js';
import { registerPrompts } from '../admin/prompts/index.js';
import { createPromptLookup } from '../prompts/index.js';
import { registerGuardrails } from '../admin/guardrails/index.js';
import { createGuardrailLookup, type GuardrailLookup } from '../guardrails/store/index.js';
import { createCredentials, registerCredentialRoutes, type CredentialResolver } from '../admin/credentials/index.js';
import { registerUsageLimitPolicies } from '../admin/usage-limits-policies/index.js';
import { createScimTokenVerifier } from '../auth/scim-tokens.js';
import { createLogVisibility } from '../admin/settings/log-visibility.js';
import { registerSecuritySettingsRoutes } from '../admin/settings/routes.js';
import { createSecuritySettings } from '../admin/settings/security-settings.js';
import { createFeatureFlags } from '../features/flags.js';
import { createApiKeyVerifier, type ApiKeyVerifier } from '../auth/api-key-service.js';
import { registerJwtSettingsRoutes } from '../admin/jwt/routes.js';
import { createJwtGate } from './plugins/jwt-auth.js';
import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import { lazyService } from '../lib/lazy.js';
import { VERSION } from '../lib/version.js';
import type { Db } from '../storage/database.js';
import { createRepositories, type Repositories } from '../storage/repositories/index.js';
import type { Logger } from '../telemetry/logger.js';
import { registerAudit } from './plugins/audit.js';
import { registerAuth } from './plugins/auth.js';
import { registerOpenApi } from './plugins/openapi.js';
import type { RouteAccess } from '../http/route-config.js';
import { registerReadiness } from './readiness.js';
import { registerDryRun, registerDryRunRoute } from './dry-run.js';
import { registerRequestGate } from './request-gate.js';
import { registerReferencePaths } from './reference-paths.js';
import { registerAnalytics } from '../admin/analytics/index.js';
import { registerLogRoutes } from '../admin/logs/routes.js';
import { registerLogInsertRoute } from '../admin/logs/insert-route.js';
import { registerLogStreamRoute } from '../admin/logs/stream-route.js';
import { registerProviderCatalogRoute } from '../admin/provider-catalog/routes.js';
import { registerGatewayRoutes } from '../gateway/routes.js';
import { createConfigSelector } from '../gateway/routing/config-selector.js';
import { createResponseCache } from '../cache/index.js';
import { changesLimits, createLimits, type Limits } from '../limits/index.js';
import type { AlertSink } from '../limits/usage-recorder.js';
import { createUpstreamClient } from '../gateway/upstream-client.js';
import { registerModelPricingRoutes } from '../admin/model-pricing/routes.js';
import { createPricingService } from '../pricing/create-pricing-service.js';
import { createRequestLogWriter, type RequestLogWriter } from '../telemetry/request-log-writer.js';
import { createChangeBus, type ChangeBus } from '../storage/change-bus.js';
import { createSecrets } from '../secrets/index.js';
import { createRotationWriter, type RotationWriter } from '../secrets/rotation-writer.js';
import { publishingCaches, subscribeCaches } from './shared-caches.js';
import { registerDeployments } from '../admin/deployments/index.js';
import { createServedDeploymentLookup } from '../deployments/served-deployment.js';
import { createMcp, mcpGateway, mcpOAuthEndpoints, registerMcpAdmin, type Mcp } from './mcp-parts.js';
import { registerAgents } from '../admin/agents/index.js';
import { createAgentDirectory } from '../agents/directory.js';
import { createAgentGateway } from '../gateway/agents/agent-gateway.js';
import { registerAgentGatewayRoutes } from '../gateway/agents/routes.js';
import { createAgentIntegrationRepository } from '../storage/repositories/agent-integrations.js';
import { createAgentServerRepository } from '../storage/repositories/agent-servers.js';

export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  clock: Clock;
  /** Replaces the pooled upstream HTTP client's dispatcher (tests route provider hosts to mocks). */
  upstreamDispatcher?: Dispatcher;
  /** Where budget alerts go (the notification outbox); without it they are only logged. */
  alerts?: AlertSink;
  /** The SQLite database of the response cache when it is not `db` (storage on PostgreSQL). */
  cacheDb?: Db;
  /** Tells the other instances' caches about changes (PostgreSQL); without it changes stay in this process. */
  changes?: ChangeBus;
  /** The deployment this instance serves (`serve --deployment`): its rules apply to the gateway's traffic. */
  deploymentId?: string;
}

export interface App {
  app: FastifyInstance;
  keys: ApiKeyVerifier;
  /** Every route with its declared access, in registration order. */
  routes: RouteAccess[];
  /** Resolves stored provider credentials (`@provider`, virtual keys) for the gateway. */
  credentials: CredentialResolver;
  /** Batched request-log writer; flushed when the app closes. */
  requestLogs: RequestLogWriter;
  limits: Limits;
  /** Background work of the observability routes (retention, exports); started by the server. */
  observability: Observability;
  /** The guardrails a request runs (workspace defaults and config), cached; for the gateway. */
  guardrails: GuardrailLookup;
  /** Every cache-clearing change, published here or received from another instance. */
  changes: ChangeBus;
  /** Users deactivated, reactivated or deleted by SCIM: what holds sessions listens here (docs/scim.md). */
  userStatus: UserStatusEvents;
  /** MCP: pooled upstream connections, the capability sync (started by the server), the gateway's view. */
  mcp: Mcp;
  /** Writes rotated API keys into the secret references their rotation policies name. */
  rotationWriter: RotationWriter;
}

function logOnlyAlerts(logger: Logger): AlertSink {
  return {
    raise: async (alert) =>
      void logger.warn({ kind: alert.kind, organisation_id: alert.organisationId }, alert.subject),
  };
}

/** Admin keys belong to no workspace; their gateway traffic is counted in the default one. */
function defaultWorkspaceLookup(workspaces: Repositories['workspaces']) {
  const cache = new Map<string, string>();
  return async (organisationId: string): Promise<string> => {
    const hit = cache.get(organisationId);
    if (hit) return hit;
    const row = await workspaces.findDefault(organisationId);
    if (!row) throw new Error(`organisation ${organisationId} has no default workspace`);
    cache.set(organisationId, row.id);
    return row.id;
  };
}

/** Assembles the server from its parts; nothing here listens or reads settings itself. */
export async function buildApp(deps: AppDeps): Promise<App> {
  /** First segments after /v1 of the control plane's routes; filled once they are registered. */
  const controlPlaneSegments = new Set<string>();
  const app = createHttpApp(deps, controlPlaneSegments);

  const repos = createRepositories(deps.db);
  const changes = deps.changes ?? createChangeBus();
  const localKeys = createApiKeyVerifier({
    repo: repos.apiKeys,
    clock: deps.clock,
    ttlMs: deps.config.key_cache_ttl_ms,
  });
  const secrets = createSecrets({ config: deps.config, clock: deps.clock });
  const { secretBox, resolver: localCredentials } = createCredentials({
    config: deps.config,
    db: deps.db,
    clock: deps.clock,
    secrets: secrets.cache,
    logger: deps.logger,
  });
  const rotationWriter = createRotationWriter({ db: deps.db, secretBox, managers: secrets.managers });
  // Everything below clears these caches through the bus, so that every instance clears its own.
  const { keys, credentials } = publishingCaches(changes, { keys: localKeys, credentials: localCredentials });
  const routes: RouteAccess[] = [];

  registerErrorHandling(app);
  registerOpenApi(app, VERSION);
  const features = createFeatureFlags(deps.config);
  const jwtAuth = createJwtAuthenticatorFor(deps, repos);
  registerAuth(app, {
    keys,
    routes,
    features,
    jwt: createJwtGate({
      authenticator: jwtAuth,
      audit: features.enabled('audit_logs') ? repos.auditLogs : null,
      clock: deps.clock,
    }),
    scim: createScimTokenVerifier({ repo: repos.scimTokens, clock: deps.clock }),
    sessions: createSessions({ repos, clock: deps.clock }),
  });
  registerReferencePaths(app);
  const guardrails = createGuardrailLookup({
    guardrails: repos.guardrails,
    workspaces: repos.workspaces,
    clock: deps.clock,
  });
  const gatewayGuards = features.enabled('guardrails') ? gatewayGuardrails(deps, guardrails) : null;
  const requestLogs = createRequestLogWriter({
    repo: repos.requestLogs,
    logger: deps.logger,
    flushIntervalMs: deps.config.log_flush_interval_ms,
    accessLog: deps.config.access_log,
    // Guardrail feedback is batched like the logs and written ahead of them: a log shows its feedback.
    ...(gatewayGuards ? { beforeWrite: () => gatewayGuards.flushFeedback() } : {}),
  });
  const defaultWorkspaceId = defaultWorkspaceLookup(repos.workspaces);
  registerRequestGate(app, {
    maxBodyBytes: deps.config.max_body_bytes,
    clock: deps.clock,
    logs: requestLogs,
    defaultWorkspaceId,
  });
  registerDryRun(app, { db: deps.db });
  registerAudit(app, { repo: repos.auditLogs, db: deps.db, clock: deps.clock, features });
  const limits = await createLimits({
    features,
    config: deps.config,
    db: deps.db,
    repos,
    clock: deps.clock,
    logger: deps.logger,
    alerts: deps.alerts ?? logOnlyAlerts(deps.logger),
    onBudgetsReset: () => {
      changes.publish({ topic: 'limits' });
      keys.invalidateAll();
      // Providers and virtual keys carry budgets too: their resolved limits hold the period start.
      credentials.invalidateAll();
    },
  });
  // Any change to policies, keys or workspaces clears the limits' caches before its answer is sent.
  // Callback style: every gateway answer passes here, and an async hook costs a promise and a tick.
  app.addHook('onSend', (request, _reply, payload, done) => {
    if (changesLimits(request.method, request.url)) changes.publish({ topic: 'limits' });
    done(null, payload);
  });
  const securitySettings = createSecuritySettings({
    db: deps.db,
    clock: deps.clock,
    onChange: () => changes.publish({ topic: 'settings' }),
  });

  const zapp = app.withTypeProvider<ZodTypeProvider>();
  registerSystemRoutes(zapp, app);
  registerReadiness(zapp, { db: deps.db, store: limits.store, config: deps.config });
  registerDryRunRoute(zapp, { db: deps.db });

  const checkGuardrails = registerGuardrails(zapp, {
    repos,
    clock: deps.clock,
    features,
    onChange: () => changes.publish({ topic: 'guardrails' }),
  });
  const { userStatus } = await registerOrganisationAdmin(zapp, {
    config: deps.config,
    clock: deps.clock,
    logger: deps.logger,
    repos,
    keys,
    secretBox,
    securitySettings,
    rotationWriter,
    checkGuardrails,
    onGuardrailDefaultsChange: () => changes.publish({ topic: 'guardrails' }),
  });
  registerUsageLimitPolicies(zapp, { repos, clock: deps.clock, budgets: limits.service });
  const configSelector = createConfigSelector({ configs: repos.configs, clock: deps.clock });
  registerConfigs(zapp, {
    repos,
    clock: deps.clock,
    onChange: () => changes.publish({ topic: 'configs' }),
    checkGuardrails,
  });
  const prompts = createPromptLookup({ prompts: repos.prompts });
  registerPrompts(zapp, { repos, lookup: prompts, settings: securitySettings, clock: deps.clock });
  registerDeployments(zapp, {
    repos,
    clock: deps.clock,
    settings: deps.config,
    onChange: () => changes.publish({ topic: 'deployments' }),
  });
  const deployment = deps.deploymentId
    ? createServedDeploymentLookup({ repo: repos.deployments, clock: deps.clock, deploymentId: deps.deploymentId })
    : null;
  registerAuditLogRoutes(zapp, repos.auditLogs);
  registerCredentialRoutes(zapp, {
    repos,
    secretBox,
    credentials,
    clock: deps.clock,
    ambientCredentials: deps.config.secret_manager_ambient_credentials,
  });
  const visibility = createLogVisibility({ db: deps.db, settings: securitySettings });
  registerLogRoutes(zapp, {
    db: deps.db,
    repo: repos.requestLogs,
    workspaces: repos.workspaces,
    writer: requestLogs,
    visibility,
  });
  const observabilityDeps = {
    config: deps.config,
    db: deps.db,
    repos,
    clock: deps.clock,
    logger: deps.logger,
    features,
    requestLogs,
    visibility,
    settings: securitySettings,
    secretBox,
  };
  registerAnalytics(zapp, observabilityDeps);
  const observability = registerObservability(zapp, observabilityDeps);
  registerSecuritySettingsRoutes(zapp, { settings: securitySettings, workspaces: repos.workspaces });
  registerJwtSettingsRoutes(
    zapp,
    lazyService(async () =>
      (await import('../admin/jwt/service.js')).createJwtSettingsService({
        repo: repos.jwtSettings,
        clock: deps.clock,
        onChange: () => changes.publish({ topic: 'settings' }),
      }),
    ),
  );
  registerLogStreamRoute(zapp, { workspaces: repos.workspaces, writer: requestLogs, visibility });
  registerProviderCatalogRoute(zapp);
  const pricing = createPricingService({ config: deps.config, clock: deps.clock, logger: deps.logger });
  registerModelPricingRoutes(zapp, pricing);
  registerLogInsertRoute(zapp, {
    config: deps.config,
    clock: deps.clock,
    repo: repos.requestLogs,
    workspaces: repos.workspaces,
    pricing,
  });
  const mcp = createMcp({
    config: deps.config,
    db: deps.db,
    repos,
    secretBox,
    clock: deps.clock,
    logger: deps.logger,
    changes,
    secrets: secrets.cache,
  });
  registerMcpAdmin(zapp, mcp, { repos, secretBox, clock: deps.clock, changes, checkGuardrails });
  // Agent integrations hold credentials: their changes travel as credential changes (docs/agents.md).
  const agentRepos = {
    integrations: createAgentIntegrationRepository(deps.db),
    servers: createAgentServerRepository(deps.db),
  };
  const agentDirectory = createAgentDirectory({ ...agentRepos, secretBox, clock: deps.clock });
  changes.on((change) => {
    if (change.topic === 'credentials' || change.topic === 'all') agentDirectory.invalidate();
  });
  registerAgents(zapp, {
    repos,
    ...agentRepos,
    secretBox,
    clock: deps.clock,
    onChange: () => changes.publish({ topic: 'credentials' }),
    // An admin request waits for the card read: a few seconds, not a provider's generous time-out.
    cardTimeoutMs: Math.min(deps.config.upstream_headers_timeout_ms, 10_000),
    ...(deps.upstreamDispatcher ? { dispatcher: deps.upstreamDispatcher } : {}),
  });

  const upstream = createUpstreamClient(
    {
      connectTimeoutMs: deps.config.upstream_connect_timeout_ms,
      headersTimeoutMs: deps.config.upstream_headers_timeout_ms,
      bodyTimeoutMs: deps.config.upstream_body_timeout_ms,
    },
    deps.upstreamDispatcher,
  );
  const cache = createResponseCache({
    db: deps.cacheDb ?? deps.db,
    clock: deps.clock,
    config: deps.config,
    logger: deps.logger,
    dispatcher: upstream.dispatcher,
  });
  cache.start();
  // Runs once the server has stopped accepting and in-flight requests are done: nothing is lost.
  app.addHook('onClose', async () => {
    await cache.stop();
    await observability.stop();
    await requestLogs.flush();
    await limits.close();
    await upstream.close();
    await mcp.close();
  });
  // Before the segments below, so that no other /v1/agents/… path is passed through to a provider.
  await registerAgentGatewayRoutes(
    zapp,
    createAgentGateway({
      directory: agentDirectory,
      limits: limits.service,
      logs: requestLogs,
      clock: deps.clock,
      upstream,
      capture: deps.config.log_bodies ? deps.config.log_body_max_bytes : 0,
    }),
  );
  for (const route of routes) controlPlaneSegments.add(route.url.split('/')[2] ?? '');
  controlPlaneSegments.delete('');
  if (gatewayGuards) app.addHook('onClose', () => gatewayGuards.flushFeedback());
  await registerGatewayRoutes(app, {
    limits: limits.service,
    config: deps.config,
    clock: deps.clock,
    upstream,
    credentials,
    configs: configSelector,
    cache,
    logs: requestLogs,
    pricing,
    defaultWorkspaceId,
    guardrails: gatewayGuards,
    deployment,
    controlPlane: [...routes],
    prompts: { lookup: prompts, canView: (principal) => securitySettings.canView(principal, 'prompts') },
    mcp: mcpGateway(mcp, {
      config: deps.config,
      repos,
      clock: deps.clock,
      logger: deps.logger,
      limits: limits.service,
      logs: requestLogs,
      guardrails: gatewayGuards,
    }),
    mcpOAuth: mcpOAuthEndpoints(mcp, { config: deps.config, repos, clock: deps.clock }),
  });

  subscribeCaches(changes, {
    // A JWT caller's user, membership and workspace change when keys' do; its settings with the others.
    keys: {
      ...localKeys,
      invalidateAll: () => {
        localKeys.invalidateAll();
        jwtAuth.invalidate();
      },
    },
    credentials: localCredentials,
    configs: configSelector,
    guardrails,
    limits: limits.service,
    settings: {
      invalidate: () => {
        securitySettings.invalidate();
        jwtAuth.invalidate();
      },
    },
    deployment,
    mcp: mcp.directory,
  });
  await app.ready();
  return {
    app,
    keys,
    routes,
    credentials,
    requestLogs,
    limits,
    observability,
    guardrails,
    changes,
    userStatus,
    mcp,
    rotationWriter,
  };
}
