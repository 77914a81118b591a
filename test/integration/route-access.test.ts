import { describe, expect, it } from 'vitest';
import { isKnownScope, scopeInfo, SCOPES, ALL_SCOPES, WORKSPACE_SCOPES } from '../../src/auth/scopes.js';
import { routeAccessTable, scopesTable } from '../../src/docs/generate.js';
import type { RouteAccess } from '../../src/http/route-config.js';
import { addUser } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const fillParams = (url: string) => url.replace(/:\w+/g, '00000000-0000-4000-8000-000000000000');
const bodyFor = (method: string) => (['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined);
type Declared = RouteAccess & { auth: Exclude<RouteAccess['auth'], { public: true } | { scim: true }> };
/** Routes that take an API key (public routes take none, SCIM routes a SCIM token: see scim tests). */
const declared = (routes: readonly RouteAccess[]) =>
  routes.filter((route): route is Declared => !('public' in route.auth) && !('scim' in route.auth));

/** Keys of an organisation member (no admin role) holding every scope: an admin key, and a workspace key as workspace member. */
async function memberKeys(t: TestServer, admin: ApiClient): Promise<{ adminKey: ApiClient; workspaceKey: ApiClient }> {
  const { organisationId, workspaceId } = t.server.bootstrap;
  const userId = await addUser(t.server.db, organisationId, 'member', [{ workspaceId, role: 'member' }]);
  const adminKey = await admin.post('/v1/api-keys/organisation/service', { name: 'handed over', scopes: ALL_SCOPES });
  expect(adminKey.status).toBe(200);
  await t.server.db.updateTable('api_keys').set({ user_id: userId }).where('id', '=', adminKey.body.id).execute();
  const workspaceKey = await admin.post('/v1/api-keys/workspace/user', {
    name: 'member',
    workspace_id: 'default',
    user_id: userId,
    scopes: WORKSPACE_SCOPES,
  });
  expect(workspaceKey.status).toBe(200);
  return {
    adminKey: apiClient(t.baseUrl, adminKey.body.key),
    workspaceKey: apiClient(t.baseUrl, workspaceKey.body.key),
  };
}

describe('route access declarations', () => {
  it('every non-public route declares a known scope and key types; workspace keys are only asked for workspace scopes', async () => {
    const t = await startTestServer();
    const routes = declared(t.server.routes);
    expect(routes.length).toBeGreaterThan(40);
    for (const { method, url, auth } of routes) {
      const where = `${method} ${url}`;
      expect(auth.scope, where).not.toBeUndefined();
      expect(auth.keyTypes.length, where).toBeGreaterThan(0);
      for (const kind of auth.keyTypes) {
        const scope = auth.scope === null || typeof auth.scope === 'string' ? auth.scope : auth.scope[kind];
        if (scope === null) continue;
        expect(isKnownScope(scope), `${where}: ${scope}`).toBe(true);
        if (kind === 'workspace')
          expect(scopeInfo(scope)?.workspace, `${where}: a workspace key cannot hold ${scope}`).toBe(true);
      }
    }
  });

  it('the generated tables list every route and every scope', async () => {
    const t = await startTestServer();
    const table = routeAccessTable(t.server.routes);
    for (const route of t.server.routes) {
      const row = table.split('\n').find((line) => line.startsWith(`| ${route.method} | \`${route.url}\` |`));
      expect(row, `${route.method} ${route.url}`).toBeDefined();
      if (!('public' in route.auth) && !('scim' in route.auth) && route.auth.roles)
        expect(row).toMatch(/\| (org|workspace): /);
      for (const feature of route.features) expect(row).toContain(`${feature.toUpperCase()}_ENABLED`);
    }
    expect(table).toContain(
      '| PUT | `/v1/settings/security` | `organisations.update` | admin | org: owner, admin | `API_ACCESS_ENABLED` |',
    );
    expect(table).toContain('`USAGE_LIMITS_ENABLED`, `POLICY_ENABLED`');
    const scopes = scopesTable(t.server.routes);
    for (const scope of SCOPES)
      expect(scopes).toContain(
        `| \`${scope.name}\` | ${scope.description} | yes | ${scope.workspace ? 'yes' : 'no'} |`,
      );
    expect(scopes).toContain('GET `/v1/logs`');
  });

  it('declared roles are enforced: callers without the role get ROLE_NOT_ALLOWED before anything else, owners do not', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);
    const member = await memberKeys(t, owner);
    const restricted = declared(t.server.routes).filter((route) => route.auth.roles);
    expect(restricted.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining([
        'POST /v1/api-keys/organisation/service',
        'POST /v1/api-keys/workspace/user',
        'POST /v1/workspaces',
        'PUT /v1/settings/security',
        'PUT /v1/workspaces/:workspaceId/settings/security',
        'POST /v1/integrations',
      ]),
    );
    for (const route of restricted) {
      const where = `${route.method} ${route.url}`;
      const path = fillParams(route.url);
      for (const kind of route.auth.keyTypes) {
        const res = await (kind === 'admin' ? member.adminKey : member.workspaceKey).call(
          route.method,
          path,
          bodyFor(route.method),
        );
        expect(res.status, `${where} with a member's ${kind} key`).toBe(403);
        expect(res.body.error.code, `${where} with a member's ${kind} key`).toBe('ROLE_NOT_ALLOWED');
      }
      if (route.auth.keyTypes.includes('admin')) {
        const res = await owner.call(route.method, path, bodyFor(route.method));
        expect(res.body?.error?.code, `${where} as the owner`).not.toBe('ROLE_NOT_ALLOWED');
      }
    }
  });
});
