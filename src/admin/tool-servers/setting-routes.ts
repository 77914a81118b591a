import type { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import { ADMIN_ONLY, BOTH_KEY_TYPES, type RouteAudit } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { registerReadAndChange, type ChangedRow, type RouteDocs } from './pair-routes.js';

type Schema = z.ZodType;

/** What MCP and agents each bring to a setting's routes: their paths, texts, schemas and service. */
export interface SettingRoutes<Q extends Schema, B extends Schema> {
  /** The collection path, such as `/v1/mcp-servers`. */
  base: string;
  /** The scope prefix, such as `mcp_servers` (`.read` to read, `.update` to change). */
  scope: string;
  params: z.ZodType<{ id: string }>;
  audit: (action: string) => RouteAudit;
  read: RouteDocs & { querystring?: Q; response: Schema };
  change: RouteDocs & { body: B; response: Schema };
  get: (principal: Principal, id: string, query: z.output<Q>) => Promise<unknown>;
  set: (principal: Principal, id: string, body: z.output<B>) => Promise<ChangedRow>;
}

const success = () => ({ success: true as const });

function register<Q extends Schema, B extends Schema>(
  app: ZodApp,
  spec: SettingRoutes<Q, B>,
  setting: { segment: string; action: string; keyTypes: typeof BOTH_KEY_TYPES | typeof ADMIN_ONLY },
  answer: () => unknown,
  auditWorkspace: boolean,
): void {
  const auth = (verb: string) => ({ scope: `${spec.scope}.${verb}`, keyTypes: setting.keyTypes });
  registerReadAndChange(app, {
    path: `${spec.base}/:id/${setting.segment}`,
    params: spec.params,
    read: { ...spec.read, auth: auth('read'), run: spec.get },
    change: {
      ...spec.change,
      auth: auth('update'),
      audit: spec.audit(setting.action),
      run: spec.set,
      answer,
      auditWorkspace,
    },
  });
}

/**
 * `/:id/workspaces` of an organisation integration: which workspaces may use it. Admin keys only;
 * the change belongs to the organisation, so its audit record names no workspace.
 */
export function registerWorkspaceAccessRoutes<Q extends Schema, B extends Schema>(
  app: ZodApp,
  spec: SettingRoutes<Q, B>,
): void {
  register(app, spec, { segment: 'workspaces', action: 'update_workspaces', keyTypes: ADMIN_ONLY }, () => ({}), false);
}

/** `/:id/user-access` of a server: its default user access and per-user overrides. */
export function registerUserAccessRoutes<Q extends Schema, B extends Schema>(
  app: ZodApp,
  spec: SettingRoutes<Q, B>,
): void {
  register(
    app,
    spec,
    { segment: 'user-access', action: 'update_user_access', keyTypes: BOTH_KEY_TYPES },
    success,
    true,
  );
}

/**
 * `/:id/<items>` of an integration or server: which of its items (MCP capabilities, agent skills)
 * are enabled. The audit action is `update_<items>`.
 */
export function registerSwitchRoutes<Q extends Schema, B extends Schema>(
  app: ZodApp,
  spec: SettingRoutes<Q, B> & { items: 'capabilities' | 'skills' },
): void {
  register(app, spec, { segment: spec.items, action: `update_${spec.items}`, keyTypes: BOTH_KEY_TYPES }, success, true);
}
