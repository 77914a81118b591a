import { createHash } from 'node:crypto';
import { openConfigurations } from '../admin/credentials/secrets.js';
import type { GuardrailUseCheck } from '../admin/guardrails/references.js';
import { registerMcpIntegrations } from '../admin/mcp-integrations/index.js';
import { registerMcpServers } from '../admin/mcp-servers/index.js';
import { createSecretMappingRules } from '../admin/secret-references/mappings.js';
import type { Config } from '../config/schema.js';
import type { GatewayGuardrails } from '../gateway/guardrails/request-guard.js';
import { createMcpGateway, type McpGateway } from '../gateway/mcp/mcp-gateway.js';
import type { ZodApp } from '../http/zod-app.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { LimitsService } from '../limits/limits-service.js';
import { createMcpDirectory, type McpDirectory } from '../mcp/directory.js';
import { createMcpSync, type McpSync } from '../mcp/sync.js';
import { createMappedSettings, type McpMappedField } from '../mcp/mapped-settings.js';
import type { McpConnectionSettings, McpEndpoint } from '../mcp/types.js';
import { createMcpUserOAuth, type McpUserOAuth } from '../mcp/user-oauth.js';
import { createMcpOAuthEndpoints } from '../gateway/mcp/oauth-endpoints.js';
import { parseMappings } from '../secrets/mappings.js';
import type { SecretCache } from '../secrets/secret-cache.js';
import { targetOf } from '../secrets/target.js';
import type { SecretReferenceRepository } from '../storage/repositories/secret-references.js';
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
  oauth: McpUserOAuth;
  sync: McpSync;
  directory: McpDirectory;
  /** Stops the periodic sync and closes every pooled upstream connection. */
  close(): Promise<void>;
}

/**
 * An integration's row as the connection it describes, secrets opened and mapped fields wired to
 * their secret references. The version is a hash of everything that shapes the connection
 * (the references' versions included), so a rename does not replace pooled connections but a
 * new URL, transport, credential or mapping does.
 */
function endpointOf(deps: { secretBox: SecretBox; references: SecretReferenceRepository; secrets: SecretCache }) {
  return async (row: McpIntegrationRow): Promise<McpEndpoint> => {
    const settings = openConfigurations(deps.secretBox, row.configurations) as McpConnectionSettings;
    const mappings = parseMappings(row.secret_mappings);
    const references = await deps.references.findActiveByIds(
      row.organisation_id,
      mappings.map((m) => m.secret_reference_id),
    );
    const fields = mappings.map((mapping): McpMappedField => {
      const reference = references.find((r) => r.id === mapping.secret_reference_id);
      return {
        targetField: mapping.target_field,
        target: reference ? targetOf(reference, deps.secretBox) : null,
        secretKey: mapping.secret_key ?? reference?.secret_key ?? null,
        format: mapping.value_format ?? 'string',
        allowedWorkspaces:
          !reference || reference.allow_all_workspaces === 1
            ? null
            : (JSON.parse(reference.allowed_workspaces) as string[]),
        where: `${mapping.target_field} of MCP integration ${row.slug} (secret reference ${reference?.slug ?? mapping.secret_reference_id})`,
      };
    });
    return {
      integrationId: row.id,
      version: createHash('sha256')
        .update(
          [
            row.url,
            row.transport,
            row.auth_type,
            row.configurations,
            row.secret_mappings,
            ...references.map((r) => `${r.id}@${r.last_updated_at}`),
          ].join('\u0000'),
        )
        .digest('hex'),
      url: row.url,
      transport: row.transport,
      authType: row.auth_type,
      settings,
      ...(fields.length > 0 ? { mapped: createMappedSettings(settings, fields, deps.secrets) } : {}),
    };
  };
}

export function createMcp(deps: {
  config: Config;
  db: Db;
  repos: Repositories;
  secretBox: SecretBox;
  clock: Clock;
  logger: Logger;
  changes: ChangeBus;
  secrets: SecretCache;
}): Mcp {
  const toEndpoint = endpointOf({
    secretBox: deps.secretBox,
    references: deps.repos.secretReferences,
    secrets: deps.secrets,
  });
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
  const oauth = createMcpUserOAuth({
    servers: deps.repos.mcpServers,
    integrations: deps.repos.mcpIntegrations,
    secretBox: deps.secretBox,
    clock: deps.clock,
    timeoutMs,
  });
  return {
    upstreams,
    oauth,
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
  const mappings = createSecretMappingRules({
    references: deps.repos.secretReferences,
    workspaces: deps.repos.workspaces,
  });
  registerMcpIntegrations(app, {
    mappings,
    workspacesUsing: (integrationId) => deps.repos.secretReferences.mcpIntegrationWorkspaces(integrationId),
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
    assertMappingsUsableIn: (principal, stored, workspaceId, param) =>
      mappings.assertUsableIn(principal, stored, workspaceId, param),
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
    oauth: mcp.oauth,
    publicUrl: deps.config.public_url,
  });
}

/** The per-user OAuth steps of MCP servers (authorize, callback, the caller's own connection). */
export function mcpOAuthEndpoints(mcp: Mcp, deps: { config: Config; repos: Repositories; clock: Clock }) {
  return createMcpOAuthEndpoints({
    directory: mcp.directory,
    oauth: mcp.oauth,
    servers: deps.repos.mcpServers,
    clock: deps.clock,
    publicUrl: deps.config.public_url,
    onRevoked: (integrationId) => mcp.upstreams.drop(integrationId),
  });
}
