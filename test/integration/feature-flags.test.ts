import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { ALL_FEATURES, createFeatureFlags, featureVariable } from '../../src/features/flags.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { expectScimError, insertScimToken, scimClient } from '../helpers/scim.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';

const ADMIN_KEY = 'svc-feature-flags-test-admin-key-0123456789';
// 32 characters → 8 prompt tokens; max_tokens 5 → 5 completion tokens; gpt-4o: 70 µUSD a request.
const COST = 0.00007;
const priced = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(32) }], max_tokens: 5 };

const expectDisabled = (res: { status: number; body: any }, variable: string) => {
  expect(res.status).toBe(403);
  expect(res.body.error).toMatchObject({ code: 'FEATURE_DISABLED', type: 'permission_error' });
  expect(res.body.error.message).toContain(`${variable}=OFF`);
};

const fillParams = (url: string) => url.replace(/:\w+/g, '00000000-0000-4000-8000-000000000000');

/** One server over `dataDir`, then another over the same file with `env`: what a restart with a flag changed does. */
async function restartWith(
  env: Record<string, string>,
  prepare: (admin: ReturnType<typeof apiClient>, headers: Record<string, string>, baseUrl: string) => Promise<void>,
) {
  const mock = await startMockOpenAI();
  onTestFinished(() => mock.close());
  const headers = {
    'x-service-provider': 'openai',
    'x-service-custom-host': mock.baseUrl,
    authorization: 'Bearer provider-key',
  };
  const dataDir = makeTempDir();
  const first = await startTestServer({ dataDir, autoClose: false, env: { SVCGW_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY } });
  await prepare(apiClient(first.baseUrl, ADMIN_KEY), headers, first.baseUrl);
  await first.close();
  const second = await startTestServer({ dataDir, env: { SVCGW_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY, ...env } });
  return { t: second, admin: apiClient(second.baseUrl, ADMIN_KEY), headers, mock };
}

describe('feature flags', () => {
  it('reads each flag from its spec variable; OFF turns only that one off', () => {
    const dataDir = makeTempDir();
    expect(ALL_FEATURES).toEqual([
      'guardrails',
      'api_access',
      'data_exports',
      'usage_limits',
      'audit_logs',
      'scim',
      'policy',
    ]);
    for (const feature of ALL_FEATURES) {
      const variable = featureVariable(feature);
      expect(variable).toBe(`${feature.toUpperCase()}_ENABLED`);
      const flags = createFeatureFlags(loadConfig({ flags: { data_dir: dataDir }, env: { [variable]: 'OFF' } }));
      for (const other of ALL_FEATURES)
        expect(flags.enabled(other), `${variable}=OFF → ${other}`).toBe(other !== feature);
    }
    const defaults = createFeatureFlags(loadConfig({ flags: { data_dir: dataDir }, env: {} }));
    expect(ALL_FEATURES.every((feature) => defaults.enabled(feature))).toBe(true);
  });

  it('AUDIT_LOGS_ENABLED=OFF: the audit-logs route answers FEATURE_DISABLED and no audit record is written', async () => {
    const t = await startTestServer({ env: { AUDIT_LOGS_ENABLED: 'OFF' } });
    const admin = apiClient(t.baseUrl, t.adminKey);
    expect((await admin.post('/v1/workspaces', { name: 'Team', slug: 'team' })).status).toBe(200);
    expect((await admin.put('/v1/workspaces/team', { name: 'Team 2' })).status).toBe(200);
    expect(
      (
        await admin.post('/v1/policies/rate-limits', {
          workspace_id: 'team',
          conditions: [{ key: 'workspace_id', value: 'team' }],
          group_by: [{ key: 'api_key' }],
          type: 'requests',
          unit: 'rpm',
          value: 5,
        })
      ).status,
    ).toBe(200);
    expectDisabled(await admin.get('/v1/audit-logs'), 'AUDIT_LOGS_ENABLED');
    const { n } = await t.server.db
      .selectFrom('audit_logs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(0);
    // The key is checked first: without one, the answer is 401 as on every route.
    expect((await apiClient(t.baseUrl).get('/v1/audit-logs')).status).toBe(401);
  });

  it('POLICY_ENABLED=OFF: policy routes answer FEATURE_DISABLED and existing policies stop applying; keys keep their own limits', async () => {
    let policyId = '';
    const { t, admin, headers } = await restartWith({ POLICY_ENABLED: 'OFF' }, async (before, headers) => {
      const rate = await before.post('/v1/policies/rate-limits', {
        workspace_id: 'default',
        conditions: [{ key: 'workspace_id', value: 'default' }],
        group_by: [{ key: 'workspace_id' }],
        type: 'requests',
        unit: 'rph',
        value: 1,
      });
      expect(rate.status).toBe(200);
      policyId = rate.body.id;
      const usage = await before.post('/v1/policies/usage-limits', {
        workspace_id: 'default',
        conditions: [{ key: 'workspace_id', value: 'default' }],
        group_by: [{ key: 'workspace_id' }],
        type: 'tokens',
        credit_limit: 1,
      });
      expect(usage.status).toBe(200);
      expect((await before.post('/v1/chat/completions', priced, headers)).status).toBe(402); // the usage policy holds less than a request
      expect((await before.post('/v1/chat/completions', priced, headers)).status).toBe(429); // the rate policy's one request is used
    });

    expectDisabled(await admin.get('/v1/policies/rate-limits'), 'POLICY_ENABLED');
    expectDisabled(await admin.get(`/v1/policies/rate-limits/${policyId}`), 'POLICY_ENABLED');
    expectDisabled(await admin.post('/v1/policies/usage-limits', {}), 'POLICY_ENABLED');
    for (let i = 0; i < 3; i++) expect((await admin.post('/v1/chat/completions', priced, headers)).status).toBe(200);

    // The limits a key or a workspace carries itself are not policies: they still apply.
    const limited = await admin.post('/v1/api-keys/workspace/service', {
      name: 'own limits',
      workspace_id: 'default',
      scopes: ['completions.write'],
      rate_limits: [{ type: 'requests', unit: 'rph', value: 1 }],
    });
    expect(limited.status).toBe(200);
    const key = apiClient(t.baseUrl, limited.body.key);
    expect((await key.post('/v1/chat/completions', priced, headers)).status).toBe(200);
    expect((await key.post('/v1/chat/completions', priced, headers)).body.error?.code).toBe('RATE_LIMITED');
    const budgeted = await admin.post('/v1/api-keys/workspace/service', {
      name: 'own budget',
      workspace_id: 'default',
      scopes: ['completions.write'],
      usage_limits: { credit_limit: COST * 0.5, type: 'cost' },
    });
    expect(
      (await apiClient(t.baseUrl, budgeted.body.key).post('/v1/chat/completions', priced, headers)).body.error?.code,
    ).toBe('USAGE_LIMIT_EXCEEDED');
  });

  it('USAGE_LIMITS_ENABLED=OFF: usage-limits policy routes answer FEATURE_DISABLED and exhausted budgets no longer refuse requests', async () => {
    let keyRaw = '';
    const { t, admin, headers, mock } = await restartWith(
      { USAGE_LIMITS_ENABLED: 'OFF' },
      async (before, headers, baseUrl) => {
        const created = await before.post('/v1/api-keys/workspace/service', {
          name: 'budgeted',
          workspace_id: 'default',
          scopes: ['completions.write'],
          usage_limits: { credit_limit: COST * 1.5, type: 'cost' },
        });
        keyRaw = created.body.key;
        const key = apiClient(baseUrl, keyRaw);
        expect((await key.post('/v1/chat/completions', priced, headers)).status).toBe(200);
        expect((await key.post('/v1/chat/completions', priced, headers)).status).toBe(402); // the key's budget is spent
        expect(
          (await before.put('/v1/workspaces/default', { usage_limits: { credit_limit: 1e-9, type: 'cost' } })).status,
        ).toBe(200);
        expect((await before.post('/v1/chat/completions', priced, headers)).status).toBe(402);
      },
    );
    const requestsBefore = mock.requests.length;

    expectDisabled(await admin.get('/v1/policies/usage-limits'), 'USAGE_LIMITS_ENABLED');
    expectDisabled(await admin.post('/v1/policies/usage-limits', {}), 'USAGE_LIMITS_ENABLED');
    // Rate-limits policies are not usage limits: still there.
    expect((await admin.get('/v1/policies/rate-limits')).status).toBe(200);

    const key = apiClient(t.baseUrl, keyRaw);
    for (let i = 0; i < 3; i++) expect((await key.post('/v1/chat/completions', priced, headers)).status).toBe(200);
    expect((await admin.post('/v1/chat/completions', priced, headers)).status).toBe(200);
    expect(mock.requests.length - requestsBefore).toBe(4);
  });

  it('API_ACCESS_ENABLED=OFF: every control-plane route answers FEATURE_DISABLED; the gateway and health stay', async () => {
    const g = await startGateway({ env: { API_ACCESS_ENABLED: 'OFF' } });
    const controlPlane = g.server.routes.filter((route) => route.features.includes('api_access'));
    expect(controlPlane.length).toBeGreaterThan(30);
    // The SCIM protocol routes take a SCIM token (checked first, like keys) and answer in the SCIM error schema.
    const scim = scimClient(g.baseUrl, await insertScimToken(g.server.db, g.server.bootstrap.organisationId));
    for (const route of controlPlane) {
      const body = ['POST', 'PUT', 'PATCH'].includes(route.method) ? {} : undefined;
      if ('scim' in route.auth) {
        const res = await scim.call(route.method, fillParams(route.url).slice('/v1/scim/v2'.length), body);
        expectScimError(res, 403);
        expect(res.body.detail, `${route.method} ${route.url}`).toContain('API_ACCESS_ENABLED=OFF');
        continue;
      }
      const res = await g.admin.call(route.method, fillParams(route.url), body);
      expect(res.status, `${route.method} ${route.url}`).toBe(403);
      expectDisabled(res, 'API_ACCESS_ENABLED');
    }
    for (const url of ['/v1/api-keys', '/v1/workspaces', '/v1/logs', '/v1/settings/security'])
      expect(g.server.routes.some((r) => r.url === url && r.features.includes('api_access'))).toBe(true);

    expect((await apiClient(g.baseUrl).get('/v1/health')).status).toBe(200);
    expect((await g.admin.post('/v1/chat/completions', priced, g.viaMock)).status).toBe(200);
    expect((await g.admin.get('/v1/models')).status).toBe(200);
    // A control-plane path never falls through to the pass-through route.
    expect((await g.admin.get('/v1/workspaces')).body.error.code).toBe('FEATURE_DISABLED');
    expect(g.mock.requests).toHaveLength(1);
  });
});
