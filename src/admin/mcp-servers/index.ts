import type { ZodApp } from '../../http/zod-app.js';
import { registerMcpServerRoutes } from './routes.js';
import { createMcpServerService, type McpServerServiceDeps } from './service.js';

export { gatewayPath } from './service.js';

/** Builds the MCP server service and registers its routes (docs/mcp.md). */
export function registerMcpServers(app: ZodApp, deps: McpServerServiceDeps): void {
  registerMcpServerRoutes(app, createMcpServerService(deps));
}
