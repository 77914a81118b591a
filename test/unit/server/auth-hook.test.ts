import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApiKeyVerifier, generateRawKey, hashKey } from '../../../src/auth/api-key-service.js';
import { createFeatureFlags } from '../../../src/features/flags.js';
import type { RouteAccess, RouteAuth } from '../../../src/http/route-config.js';
import { registerAuth } from '../../../src/server/plugins/auth.js';
import { registerErrorHandling } from '../../../src/server/plugins/errors.js';
import type { ApiKeyRepository, ApiKeyWithRoles } from '../../../src/storage/repositories/api-keys.js';

/** The auth hook on a bare fastify app: one workspace key with `completions.write`, stored behind a counting lookup. */
async function appWith(options: { apiAccess?: boolean } = {}) {
  const raw = generateRawKey();
  const row = {
    id: 'key-1',
    key_hash: hashKey(raw),
    previous_key_hash: null,
    previous_key_expires_at: null,
    status: 'active',
    expires_at: null,
    type: 'workspace-service',
    organisation_id: 'org-1',
    workspace_id: 'ws-1',
    user_id: null,
    org_role: null,
    workspace_role: null,
    workspace_status: 'active',
    scopes: '["completions.write"]',
    rate_limits: null,
    usage_limits: null,
    defaults: null,
    created_at: '2026-11-24T00:00:00.000Z',
    name: 'test',
  } as unknown as ApiKeyWithRoles;
  const lookups: string[] = [];
  const repo = {
    findByAnyHashWithRoles: (hash: string) => {
      lookups.push(hash);
      return Promise.resolve(hash === row.key_hash ? { ...row } : undefined);
    },
  } as unknown as ApiKeyRepository;
  const keys = createApiKeyVerifier({ repo, clock: { now: () => 0 }, ttlMs: 60_000 });
  const routes: RouteAccess[] = [];
  const app = Fastify();
  registerErrorHandling(app);
  registerAuth(app, {
    keys,
    routes,
    features: createFeatureFlags({ api_access_enabled: options.apiAccess ?? true } as never),
    jwt: () => Promise.reject(new Error('no JWT in this test')),
  });
  const route = (url: string, auth: RouteAuth) =>
    app.get(url, { config: { auth } }, (request) => ({
      features: request.routeOptions.config.accessFeatures,
      key: request.principal?.keyId ?? null,
    }));
  route('/v1/gateway', { scope: 'completions.write', keyTypes: ['admin', 'workspace'] });
  route('/v1/admin', { scope: null, keyTypes: ['admin', 'workspace'] });
  route('/v1/admin-only', { scope: null, keyTypes: ['admin'] });
  route('/v1/workspaces-read', { scope: 'workspaces.read', keyTypes: ['admin', 'workspace'] });
  route('/v1/public', { public: true });
  await app.ready();
  onTestFinished(() => app.close());
  const get = (url: string, headers: Record<string, string> = { 'x-service-api-key': raw }) =>
    app.inject({ method: 'GET', url, headers });
  return { app, raw, routes, lookups, get };
}

describe('auth hook', () => {
  it('works out each route’s features once, when it registers', async () => {
    const { routes, get } = await appWith();
    expect(routes.find((r) => r.url === '/v1/admin')?.features).toEqual(['api_access']);
    expect(routes.find((r) => r.url === '/v1/gateway')?.features).toEqual([]);
    expect((await get('/v1/admin')).json()).toEqual({ features: ['api_access'], key: 'key-1' });
    expect((await get('/v1/gateway')).json()).toEqual({ features: [], key: 'key-1' });
    expect((await get('/v1/public', {})).json()).toEqual({ features: [], key: null });
  });

  it('lets a cached key through without reading it again, and refuses what the route does not allow', async () => {
    const { get, lookups } = await appWith();
    expect((await get('/v1/gateway')).statusCode).toBe(200);
    expect((await get('/v1/gateway')).statusCode).toBe(200);
    expect(lookups).toHaveLength(1);
    // Refusals from a cached key (answered synchronously) go through the one error handler.
    const wrongType = await get('/v1/admin-only');
    expect(wrongType.statusCode).toBe(403);
    expect(wrongType.json().error.code).toBe('KEY_TYPE_NOT_ALLOWED');
    const noScope = await get('/v1/workspaces-read');
    expect(noScope.statusCode).toBe(403);
    expect(noScope.json().error.code).toBe('MISSING_SCOPE');
  });

  it('refuses missing, malformed and unknown keys with 401', async () => {
    const { get } = await appWith();
    const missing = await get('/v1/gateway', {});
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error.code).toBe('UNAUTHENTICATED');
    const malformed = await get('/v1/gateway', { 'x-service-api-key': 'svc-short' });
    expect(malformed.json().error).toMatchObject({ code: 'INVALID_API_KEY', message: 'The API key is malformed.' });
    const unknown = await get('/v1/gateway', { 'x-service-api-key': generateRawKey() });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json().error).toMatchObject({ code: 'INVALID_API_KEY', message: 'The API key is not valid.' });
  });

  it('answers FEATURE_DISABLED only to a caller with a valid key', async () => {
    const { get } = await appWith({ apiAccess: false });
    expect((await get('/v1/admin', {})).json().error.code).toBe('UNAUTHENTICATED');
    expect((await get('/v1/admin')).json().error.code).toBe('FEATURE_DISABLED'); // first request: loaded
    expect((await get('/v1/admin')).json().error.code).toBe('FEATURE_DISABLED'); // then: cached
    expect((await get('/v1/gateway')).statusCode).toBe(200);
  });
});
