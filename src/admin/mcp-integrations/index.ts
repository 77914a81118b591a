import type { ZodApp } from '../../http/zod-app.js';
import { registerMcpIntegrationRoutes } from './routes.js';
import { createMcpIntegrationService, type McpIntegrationServiceDeps } from './service.js';

/** Builds the MCP integration service and registers its routes (docs/mcp.md). */
export function registerMcpIntegrations(app: ZodApp, deps: McpIntegrationServiceDeps): void {
  registerMcpIntegrationRoutes(app, createMcpIntegrationService(deps));
}
