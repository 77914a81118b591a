import { createHash } from 'node:crypto';
import { openConfigurations } from '../admin/credentials/secrets.js';
import type { GuardrailUseCheck } from '../admin/guardrails/references.js';
import { registerMcpIntegrations } from '../admin/mcp-integrations/index.js';
import { registerMcpServers } from '../admin/mcp-servers/index.js';
import type { Config } from '../config/schema.js';
import type { GatewayGuardrails } from '../gateway/guardrails/request-guard.js';
import { createMcpGateway, type McpGateway } from '../gateway/mcp/mcp-gateway.js';
import type { ZodApp } from '../http/zod-app.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { LimitsService } from '../limits/limits-service.js';
import { createMcpDirectory, type McpDirectory } from '../mcp/directory.js';
import { createMcpSync, type McpSync } from '../mcp/sync.js';
import type { McpEndpoint } from '../mcp/types.js';
import { createMcpUpstreams, type McpUpstreams } from '../mcp/upstream-pool.js';
import type { ChangeBus } from '../storage/change-bus.js';
import type { Db } from '../storage/database.js';
import { afterCommit } from '../storage/request-transaction.js';
import type { Repositories } from '../storage/repositories/index.js';
import type { McpIntegrationRow } from '../storage/repositories/mcp-integrations.js';
import type { Logger } from '../telemetry/logger.js';
import type { RequestLogWriter } from '../telemetry/request-log-writer.js';

/** MCP's moving parts: pooled upstream connections, the capability sync, the gateway's view of servers. */
export interface Mcp {
  upstreams: McpUpstreams;
  sync: McpSync;
  directory: McpDirectory;
  /** Stops the periodic sync and closes every pooled upstream connection. */
  close(): Promise<void>;
}

/**
 * An integration's row as the connection it describes, secrets opened. The version is a hash
 * of everything that shapes the connection, so a rename does not replace pooled connections
 * but a new URL, transport or credential does.
 */
function endpointOf(secretBox: SecretBox) {
  return (row: McpIntegrationRow): McpEndpoint => ({
    integrationId: row.id,
    version: createHash('sha256')
      .update([row.url, row.transport, row.auth_type, row.configurations].join('\u0000'))
      .digest('hex'),
    url: row.url,
    transport: row.transport,
    authType: row.auth_type,
    settings: openConfigurations(secretBox, row.configurations),
  });
}

export function createMcp(deps: {
  config: Config;
  db: Db;
  repos: Repositories;
  secretBox: SecretBox;
  clock: Clock;
  logger: Logger;
  changes: ChangeBus;
}): Mcp {
  const toEndpoint = endpointOf(deps.secretBox);
  const timeoutMs = deps.config.mcp_timeout_ms;
  const directory = createMcpDirectory({
    integrations: deps.repos.mcpIntegrations,
    servers: deps.repos.mcpServers,
    endpointOf: toEndpoint,
    clock: deps.clock,
  });
  const sync = createMcpSync({
    db: deps.db,
    integrations: deps.repos.mcpIntegrations,
    endpointOf: toEndpoint,
    clock: deps.clock,
    logger: deps.logger,
    timeoutMs,
    intervalMs: deps.config.mcp_sync_interval_ms,
    onChange: () => deps.changes.publish({ topic: 'mcp' }),
  });
  const upstreams = createMcpUpstreams({
    clock: deps.clock,
    logger: deps.logger,
    timeoutMs,
    onListChanged: (integrationId) => sync.request(integrationId),
  });
  return {
    upstreams,
    sync,
    directory,
    async close() {
      await sync.stop();
      await upstreams.close();
    },
  };
}

/** The MCP integration and server routes of the administration API. */
export function registerMcpAdmin(
  app: ZodApp,
  mcp: Mcp,
  deps: {
    repos: Repositories;
    secretBox: SecretBox;
    clock: Clock;
    changes: ChangeBus;
    checkGuardrails: GuardrailUseCheck;
  },
): void {
  const onChange = () => deps.changes.publish({ topic: 'mcp' });
  registerMcpIntegrations(app, {
    integrations: deps.repos.mcpIntegrations,
    workspaces: deps.repos.workspaces,
    secretBox: deps.secretBox,
    clock: deps.clock,
    onChange,
    // The sync reads the committed row, so it starts once the change (and its audit record) commit.
    requestSync: (integrationId) => void afterCommit(() => mcp.sync.request(integrationId)),
    onArchived: (integrationId) => void afterCommit(() => mcp.upstreams.drop(integrationId)),
  });
  registerMcpServers(app, {
    servers: deps.repos.mcpServers,
    integrations: deps.repos.mcpIntegrations,
    workspaces: deps.repos.workspaces,
    users: deps.repos.users,
    clock: deps.clock,
    testConnection: (integrationId) => mcp.sync.sync(integrationId),
    checkGuardrails: deps.checkGuardrails,
    onChange,
  });
}

/** The data plane's MCP endpoint handler. */
export function mcpGateway(
  mcp: Mcp,
  deps: {
    config: Config;
    repos: Repositories;
    clock: Clock;
    logger: Logger;
    limits: LimitsService;
    logs: RequestLogWriter;
    guardrails: GatewayGuardrails | null;
  },
): McpGateway {
  return createMcpGateway({
    directory: mcp.directory,
    upstreams: mcp.upstreams,
    limits: deps.limits,
    servers: deps.repos.mcpServers,
    logger: deps.logger,
    clock: deps.clock,
    logs: deps.logs,
    guardrails: deps.guardrails,
    capture: deps.config.log_bodies ? deps.config.log_body_max_bytes : 0,
    timeoutMs: deps.config.mcp_timeout_ms,
    onUnknownCapability: (integrationId) => mcp.sync.request(integrationId),
  });
}
