import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ALL_SCOPES, WORKSPACE_SCOPES } from '../../src/auth/scopes.js';
import { createManualClock } from '../../src/lib/clock.js';
import type { RouteAccess } from '../../src/http/route-config.js';
import { sessionScopes } from '../../src/admin/sso/session-scopes.js';
import { addSession, addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

/** Codes that come from the auth layer, as opposed to the resource rules of the services. */
const AUTH_CODES = new Set([
  'UNAUTHENTICATED',
  'INVALID_API_KEY',
  'KEY_TYPE_NOT_ALLOWED',
  'MISSING_SCOPE',
  'ROLE_NOT_ALLOWED',
  'INVALID_SCIM_TOKEN',
  'INVALID_SESSION',
  'SESSION_EXPIRED',
]);

const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** The code of an answer; SCIM routes answer in the SCIM error schema, whose 401 is INVALID_SCIM_TOKEN. */
function codeOf(res: { status: number; body: any }): string | undefined {
  if (res.body?.schemas?.[0] === SCIM_ERROR) return res.status === 401 ? 'INVALID_SCIM_TOKEN' : `SCIM ${res.status}`;
  return res.body?.error?.code;
}

interface Caller {
  name: string;
  key: string;
  kind: 'admin' | 'workspace';
  scopes: ReadonlySet<string>;
  orgRole: 'owner' | 'admin' | 'member';
  /** The user's role in the key's workspace (organisation owners and admins count as admins). */
  workspaceRole: 'admin' | 'manager' | 'member' | null;
  /** What `:workspaceId` is filled with. */
  workspaceId: string;
  invalid?: boolean;
  /** The code an invalid credential is refused with (INVALID_API_KEY by default). */
  invalidCode?: string;
  /** The key's own workspace differs from `workspaceId`: resource rules must refuse it. */
  foreignWorkspace?: boolean;
}

/** What the generated route table promises for this caller: pass, or the auth error code. */
function promised(route: RouteAccess, caller: Caller): string {
  const auth = route.auth;
  if ('public' in auth) return 'pass';
  // SCIM routes take a SCIM token only: every API key is refused there.
  if ('scim' in auth) return 'INVALID_SCIM_TOKEN';
  if (caller.invalid) return caller.invalidCode ?? 'INVALID_API_KEY';
  if (!auth.keyTypes.includes(caller.kind)) return 'KEY_TYPE_NOT_ALLOWED';
  const scope = auth.scope === null || typeof auth.scope === 'string' ? auth.scope : auth.scope[caller.kind];
  if (scope !== null && !caller.scopes.has(scope)) return 'MISSING_SCOPE';
  if (auth.roles) {
    const allowed = Array.isArray(auth.roles)
      ? (auth.roles as readonly string[]).includes(caller.orgRole)
      : caller.workspaceRole !== null &&
        (auth.roles as { workspace: readonly string[] }).workspace.includes(caller.workspaceRole);
    if (!allowed) return 'ROLE_NOT_ALLOWED';
  }
  return 'pass';
}

describe('authorization matrix', () => {
  it('answers every control-plane route, for every kind of caller, as the generated table says', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T09:00:00Z'));
    const t = await startTestServer({ clock });
    const owner = apiClient(t.baseUrl, t.adminKey);
    const orgId = t.server.bootstrap.organisationId;
    const a = await createWorkspace(owner, 'Team A', 'team-a');
    const b = await createWorkspace(owner, 'Team B', 'team-b');
    const c = await createWorkspace(owner, 'Scratch', 'scratch'); // admin keys act on this one

    // An organisation admin, through the real invite flow.
    const invite = await owner.post('/v1/invites', { email: 'admin@example.test', role: 'admin' });
    const accepted = await apiClient(t.baseUrl).post('/v1/invites/accept', { token: invite.body.token });
    expect(accepted.status).toBe(200);

    const managerA = await addUser(t.server.db, orgId, 'member', [{ workspaceId: a.id, role: 'manager' }]);
    const memberA = await addUser(t.server.db, orgId, 'member', [{ workspaceId: a.id, role: 'member' }]);
    const managerB = await addUser(t.server.db, orgId, 'member', [{ workspaceId: b.id, role: 'manager' }]);
    const wsKey = async (workspace: string, userId: string, scopes: readonly string[]) =>
      (await createWorkspaceKey(owner, { workspace_id: workspace, user_id: userId, scopes: [...scopes] })).key;

    const expiring = await owner.post('/v1/api-keys/organisation/service', {
      name: 'expiring',
      scopes: ALL_SCOPES,
      expires_at: '2026-06-01T10:00:00Z',
    });
    const rotating = await owner.post('/v1/api-keys/organisation/service', { name: 'rotating', scopes: ALL_SCOPES });
    expect(
      (await owner.post(`/v1/api-keys/${rotating.body.id}/rotate`, { key_transition_period_ms: 1_800_000 })).status,
    ).toBe(200);
    clock.advance(2 * 3600_000); // the first key has expired; the rotated-out secret's transition is over
    const ownerId = (await owner.get('/v1/users?role=owner')).body.data[0].id as string;

    const all = new Set(ALL_SCOPES);
    const ws = new Set(WORKSPACE_SCOPES);
    const callers: Caller[] = [
      {
        name: 'owner',
        key: t.adminKey,
        kind: 'admin',
        scopes: all,
        orgRole: 'owner',
        workspaceRole: 'admin',
        workspaceId: c.id,
      },
      {
        name: 'admin',
        key: accepted.body.api_key,
        kind: 'admin',
        scopes: all,
        orgRole: 'admin',
        workspaceRole: 'admin',
        workspaceId: c.id,
      },
      {
        name: 'manager',
        key: await wsKey('team-a', managerA, WORKSPACE_SCOPES),
        kind: 'workspace',
        scopes: ws,
        orgRole: 'member',
        workspaceRole: 'manager',
        workspaceId: a.id,
      },
      {
        name: 'member',
        key: await wsKey('team-a', memberA, WORKSPACE_SCOPES),
        kind: 'workspace',
        scopes: ws,
        orgRole: 'member',
        workspaceRole: 'member',
        workspaceId: a.id,
      },
      {
        name: 'other workspace',
        key: await wsKey('team-b', managerB, WORKSPACE_SCOPES),
        kind: 'workspace',
        scopes: ws,
        orgRole: 'member',
        workspaceRole: 'manager',
        workspaceId: a.id,
        foreignWorkspace: true,
      },
      {
        name: 'missing scope',
        key: await wsKey('team-a', managerA, []),
        kind: 'workspace',
        scopes: new Set(),
        orgRole: 'member',
        workspaceRole: 'manager',
        workspaceId: a.id,
      },
      {
        name: 'expired',
        key: expiring.body.key,
        kind: 'admin',
        scopes: all,
        orgRole: 'owner',
        workspaceRole: 'admin',
        workspaceId: c.id,
        invalid: true,
      },
      {
        name: 'rotated out',
        key: rotating.body.key,
        kind: 'admin',
        scopes: all,
        orgRole: 'owner',
        workspaceRole: 'admin',
        workspaceId: c.id,
        invalid: true,
      },
      // Sessions (single sign-on) follow the same table, with the scopes of sessionScopes.
      {
        name: 'owner session',
        key: await addSession(t.server.db, orgId, ownerId, { createdAt: clock.now() }),
        kind: 'admin',
        scopes: new Set(sessionScopes('owner', null)),
        orgRole: 'owner',
        workspaceRole: 'admin',
        workspaceId: c.id,
      },
      {
        name: 'manager session',
        key: await addSession(t.server.db, orgId, managerA, { createdAt: clock.now() }),
        kind: 'workspace',
        scopes: new Set(sessionScopes('member', 'manager')),
        orgRole: 'member',
        workspaceRole: 'manager',
        workspaceId: a.id,
      },
      {
        name: 'member session',
        key: await addSession(t.server.db, orgId, memberA, { createdAt: clock.now() }),
        kind: 'workspace',
        scopes: new Set(sessionScopes('member', 'member')),
        orgRole: 'member',
        workspaceRole: 'member',
        workspaceId: a.id,
      },
      {
        name: 'expired session',
        key: await addSession(t.server.db, orgId, ownerId, { createdAt: clock.now() - 2 * 86_400_000 }),
        kind: 'admin',
        scopes: all,
        orgRole: 'owner',
        workspaceRole: 'admin',
        workspaceId: c.id,
        invalid: true,
        invalidCode: 'SESSION_EXPIRED',
      },
    ];
    // The rotated key's NEW secret is not in the list: rotating.body.key is the original secret.

    // Control-plane routes only (the gateway has its own tests); the log stream never ends by itself.
    // Logging out ends a session caller's session: that route comes last.
    const isLogout = (route: RouteAccess) => route.url === '/v1/sessions/logout';
    const routes = t.server.routes
      .filter(
        (route) =>
          !('public' in route.auth) &&
          ('scim' in route.auth || route.auth.scope !== 'completions.write') &&
          route.url !== '/v1/logs/stream',
      )
      .sort((x, y) => Number(isLogout(x)) - Number(isLogout(y)));
    expect(routes.length).toBeGreaterThan(40);
    const mismatches: string[] = [];
    let checked = 0;
    for (const caller of callers) {
      const client = apiClient(t.baseUrl, caller.key);
      for (const route of routes) {
        const path = route.url.replace(/:(\w+)/g, (_m, name: string) =>
          name === 'workspaceId' ? caller.workspaceId : randomUUID(),
        );
        const body = route.method === 'POST' || route.method === 'PUT' ? {} : undefined;
        const res = await client.call(route.method, path, body);
        const code = codeOf(res);
        const want = promised(route, caller);
        checked++;
        if (want === 'pass') {
          if (res.status === 401 || (code !== undefined && AUTH_CODES.has(code)))
            mismatches.push(
              `${caller.name} ${route.method} ${route.url}: expected to pass the auth layer, got ${res.status} ${code}`,
            );
          else if (caller.foreignWorkspace && route.url.includes(':workspaceId') && res.status < 400)
            mismatches.push(`${caller.name} ${route.method} ${route.url}: reached another workspace (${res.status})`);
        } else if (code !== want) {
          mismatches.push(`${caller.name} ${route.method} ${route.url}: expected ${want}, got ${res.status} ${code}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect(checked).toBe(routes.length * callers.length);
  }, 120_000);
});
