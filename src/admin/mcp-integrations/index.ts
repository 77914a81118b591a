import { lazyService } from '../../lib/lazy.js';
import type { ZodApp } from '../../http/zod-app.js';
import { registerMcpIntegrationRoutes } from './routes.js';
import type { McpIntegrationServiceDeps } from './service.js';

/** Builds the MCP integration service and registers its routes (docs/mcp.md). */
export function registerMcpIntegrations(app: ZodApp, deps: McpIntegrationServiceDeps): void {
  registerMcpIntegrationRoutes(
    app,
    lazyService(async () => (await import('./service.js')).createMcpIntegrationService(deps)),
  );
}
