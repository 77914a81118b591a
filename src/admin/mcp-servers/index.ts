import { lazyService } from '../../lib/lazy.js';
import type { ZodApp } from '../../http/zod-app.js';
import { registerMcpServerRoutes } from './routes.js';
import type { McpServerServiceDeps } from './service.js';

/** Builds the MCP server service and registers its routes (docs/mcp.md). */
export function registerMcpServers(app: ZodApp, deps: McpServerServiceDeps): void {
  registerMcpServerRoutes(
    app,
    lazyService(async () => (await import('./service.js')).createMcpServerService(deps)),
  );
}
