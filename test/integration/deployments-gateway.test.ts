import { describe, expect, it } from 'vitest';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { DeploymentRefusedError } from '../../src/deployments/registration.js';
import { createManualClock } from '../../src/lib/clock.js';
import { estimateRequest } from '../../src/limits/estimate.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startMockOpenAI, type MockOpenAI } from '../helpers/mock-openai-upstream.js';
import { sharedInstancesEnv } from '../helpers/postgres.js';
import { makeTempDir, startTestServer, type TestServer } from '../helpers/start-test-server.js';
import { expectRefused } from '../helpers/tenant-pair.js';

/**
 * Deployments on the gateway path, with in-process servers on one database: a control-plane
 * server that joins no deployment, and instances started with SVCGW_DEPLOYMENT. Heartbeats are
 * an hour apart, so that only the tests (and the manual clock) move them.
 */
const ADMIN_KEY = `deployments-test-${'k'.repeat(32)}`;
const HOUR = 3600_000;
const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(32) }], max_tokens: 5 };

interface Setup {
  cp: TestServer;
  admin: ApiClient;
  mock: MockOpenAI;
  viaMock: Record<string, string>;
  keys: { a: string; b: string };
  /** Starts an instance of `slug` on the same database. */
  instance(slug: string, env?: Record<string, string>): Promise<TestServer & { admin: ApiClient }>;
}

async function setUp(clock = createManualClock(Date.parse('2026-03-02T09:00:30Z'))): Promise<Setup> {
  const dataDir = makeTempDir();
  const mock = await startMockOpenAI({ tokenizerUsage: true });
  const shared = {
    SVCGW_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
    ...(process.env.SVCGW_TEST_ENGINE === 'postgres' ? await sharedInstancesEnv() : {}),
  };
  const cp = await startTestServer({ dataDir, clock, env: shared });
  const admin = apiClient(cp.baseUrl, ADMIN_KEY);
  await createWorkspace(admin, 'Team A', 'team-a');
  await createWorkspace(admin, 'Team B', 'team-b');
  const key = async (workspace: string) =>
    (await createWorkspaceKey(admin, { workspace_id: workspace, scopes: ['completions.write'] })).key;
  return {
    cp,
    admin,
    mock,
    viaMock: { 'x-service-provider': 'openai', 'x-service-custom-host': mock.baseUrl, authorization: 'Bearer k' },
    keys: { a: await key('team-a'), b: await key('team-b') },
    async instance(slug, env = {}) {
      const server = await startTestServer({
        dataDir,
        clock,
        env: { ...shared, SVCGW_DEPLOYMENT: slug, SVCGW_DEPLOYMENT_HEARTBEAT_INTERVAL_MS: String(HOUR), ...env },
      });
      return { ...server, admin: apiClient(server.baseUrl, ADMIN_KEY) };
    },
  };
}

describe('deployments on the gateway: workspaces, limits and config', () => {
  it('serves only the workspaces the deployment allows, and says which deployment refused', async () => {
    const s = await setUp();
    expect(
      (
        await s.admin.post('/v1/deployments', {
          name: 'A',
          slug: 'alpha',
          type: 'production',
          allowed_workspaces: ['team-a'],
        })
      ).status,
    ).toBe(200);
    const alpha = await s.instance('alpha');
    const call = (server: TestServer, key: string) =>
      apiClient(server.baseUrl, key).post('/v1/chat/completions', chat, s.viaMock);

    expect((await call(alpha, s.keys.a)).status).toBe(200);
    const refused = await call(alpha, s.keys.b);
    expectRefused(refused, 403, 'DEPLOYMENT_FORBIDDEN');
    expect(refused.body.error.message).toBe(
      "Workspace team-b is not served by deployment alpha (this gateway instance's deployment); send its requests to an instance of a deployment that allows it.",
    );
    // Admin keys count in the default workspace, which alpha does not serve either.
    expectRefused(await call(alpha, ADMIN_KEY), 403, 'DEPLOYMENT_FORBIDDEN');
    expect(s.mock.requests).toHaveLength(1);
    // The refusals are in the request logs, under the workspace that was refused.
    await alpha.server.requestLogs.flush();
    const refusals = (await s.admin.get('/v1/logs?workspace_id=team-b')).body.data;
    expect(refusals.map((log: any) => [log.status_code, log.error_code])).toEqual([[403, 'DEPLOYMENT_FORBIDDEN']]);
    // The control plane joins no deployment: it serves every workspace.
    expect((await call(s.cp, s.keys.b)).status).toBe(200);

    // A change made on the instance applies to its next request.
    expect((await alpha.admin.put('/v1/deployments/alpha', { allowed_workspaces: ['team-b'] })).status).toBe(200);
    expect((await call(alpha, s.keys.b)).status).toBe(200);
    expectRefused(await call(alpha, s.keys.a), 403, 'DEPLOYMENT_FORBIDDEN');
    await alpha.admin.put('/v1/deployments/alpha', { allowed_workspaces: null });
    expect((await call(alpha, s.keys.a)).status).toBe(200);
    expect((await call(alpha, ADMIN_KEY)).status).toBe(200);
  });

  it("counts the deployment's rate limit over every key and workspace it serves, in its own window", async () => {
    const clock = createManualClock(Date.parse('2026-03-02T09:00:30Z'));
    const s = await setUp(clock);
    await s.admin.post('/v1/deployments', {
      name: 'A',
      slug: 'alpha',
      type: 'non-production',
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 2 }],
    });
    const alpha = await s.instance('alpha');
    const call = (server: TestServer, key: string) =>
      apiClient(server.baseUrl, key).post('/v1/chat/completions', chat, s.viaMock);

    const first = await call(alpha, s.keys.a);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await call(alpha, s.keys.b)).status).toBe(200);
    const limited = await call(alpha, ADMIN_KEY);
    expectRefused(limited, 429, 'RATE_LIMITED');
    expect(limited.body.error.message).toBe(
      'Rate limit reached: rate limit 2 requests per rpm of deployment alpha allows 2 requests; retry after the window resets.',
    );
    expect(limited.headers.get('retry-after')).toBe('30');
    // Traffic outside the deployment is not counted against it.
    expect((await call(s.cp, s.keys.a)).status).toBe(200);

    clock.advance(30_000);
    expect((await call(alpha, s.keys.b)).status).toBe(200);
  });

  it("holds the deployment's budget and shows its usage", async () => {
    const s = await setUp();
    const estimate = await estimateRequest({
      endpointType: 'chatComplete',
      method: 'POST',
      body: chat,
      bodyBytes: 0,
      model: 'gpt-4o',
      price: null,
      maxOutputTokens: null,
    });
    const used = 3 + 3 + countTokens('user') + countTokens('x'.repeat(32)) + 5;
    await s.admin.post('/v1/deployments', {
      name: 'A',
      slug: 'alpha',
      type: 'production',
      usage_limits: { credit_limit: estimate.tokens, type: 'tokens' },
    });
    const alpha = await s.instance('alpha');
    const client = apiClient(alpha.baseUrl, s.keys.a);
    expect((await client.post('/v1/chat/completions', chat, s.viaMock)).status).toBe(200);
    await alpha.server.requestLogs.flush();
    const refused = await apiClient(alpha.baseUrl, s.keys.b).post('/v1/chat/completions', chat, s.viaMock);
    expectRefused(refused, 402, 'USAGE_LIMIT_EXCEEDED');
    expect(refused.body.error.message).toMatch(/^The usage limit of deployment alpha cannot hold this request/);
    await alpha.server.limits.flush();
    expect((await s.admin.get('/v1/deployments/alpha')).body.usage_limits).toMatchObject({
      credit_limit: estimate.tokens,
      current_usage: used,
    });
    // Raising the limit (on the instance) lets traffic through at once.
    await alpha.admin.put('/v1/deployments/alpha', { usage_limits: { credit_limit: 1000, type: 'tokens' } });
    expect((await client.post('/v1/chat/completions', chat, s.viaMock)).status).toBe(200);
  });

  it("applies the deployment's config to requests that name none; the request's and the key's win", async () => {
    const s = await setUp();
    const config = (model: string) => ({ provider: 'openai', custom_host: s.mock.baseUrl, override_params: { model } });
    const made = async (slug: string, model: string, workspace?: string) =>
      (
        await s.admin.post('/v1/configs', {
          name: slug,
          slug,
          config: config(model),
          ...(workspace ? { workspace_id: workspace } : {}),
        })
      ).body.id as string;
    // The deployment's config lives in the default workspace; the others in the keys' own.
    const deploymentConfig = await made('deployment-routing', 'deployment-model');
    await made('header-routing', 'header-model', 'team-a');
    const keyConfig = await made('key-routing', 'key-model', 'team-b');
    await s.admin.post('/v1/deployments', {
      name: 'A',
      slug: 'alpha',
      type: 'production',
      config_id: 'deployment-routing',
    });
    const keyWithDefault = (
      await s.admin.post('/v1/api-keys/workspace/service', {
        name: 'defaulted',
        workspace_id: 'team-b',
        scopes: ['completions.write'],
        defaults: { config_id: keyConfig },
      })
    ).body.key as string;
    const alpha = await s.instance('alpha');
    const bearer = { authorization: 'Bearer k' };
    const modelSent = async (server: TestServer, key: string, headers: Record<string, string>) => {
      const res = await apiClient(server.baseUrl, key).post('/v1/chat/completions', chat, headers);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (s.mock.requests.at(-1)!.json as { model: string }).model;
    };

    // A workspace key of team-a gets the deployment's config, stored in the default workspace.
    expect(await modelSent(alpha, s.keys.a, bearer)).toBe('deployment-model');
    expect(await modelSent(alpha, s.keys.a, { ...bearer, 'x-service-config': 'header-routing' })).toBe('header-model');
    expect(await modelSent(alpha, keyWithDefault, bearer)).toBe('key-model');
    // Headers naming a provider do not name a config: the deployment's applies.
    expect(await modelSent(alpha, s.keys.a, s.viaMock)).toBe('deployment-model');
    // Without the deployment, the same request names no provider.
    expectRefused(
      await apiClient(s.cp.baseUrl, s.keys.a).post('/v1/chat/completions', chat, bearer),
      400,
      'MISSING_PROVIDER',
    );
    await alpha.server.requestLogs.flush();
    const logs = (await s.admin.get('/v1/logs?page_size=10')).body.data;
    expect(logs.filter((log: any) => log.config_id === deploymentConfig)).toHaveLength(2);

    // A config archived under the deployment is reported against the deployment.
    await alpha.admin.delete('/v1/configs/deployment-routing');
    const gone = await apiClient(alpha.baseUrl, s.keys.a).post('/v1/chat/completions', chat, bearer);
    expectRefused(gone, 400, 'CONFIG_NOT_FOUND');
    expect(gone.body.error.message).toMatch(/^The config of deployment alpha is no longer active/);
  });
});

describe('deployment instances: registration, heartbeats and versions', () => {
  it('lists instances as they register, marks a silent one gone, and prunes it a day later', async () => {
    const clock = createManualClock(Date.parse('2026-03-02T09:00:00Z'));
    const s = await setUp(clock);
    await s.admin.post('/v1/deployments', { name: 'A', slug: 'alpha', type: 'production' });
    await s.admin.post('/v1/deployments', { name: 'B', slug: 'beta', type: 'non-production' });
    const a = await s.instance('alpha');
    const b = await s.instance('beta');
    const instancesOf = async (slug: string) => (await s.admin.get(`/v1/deployments/${slug}`)).body.instances;

    expect(await instancesOf('alpha')).toEqual([
      {
        id: a.server.deploymentInstance!.id,
        status: 'active',
        version: '0.1.0',
        address: a.baseUrl,
        hostname: expect.any(String),
        pid: process.pid,
        heartbeat_interval_ms: HOUR,
        started_at: '2026-03-02T09:00:00.000Z',
        last_heartbeat_at: '2026-03-02T09:00:00.000Z',
        stopped_at: null,
        refusal_reason: null,
        object: 'deployment_instance',
      },
    ]);
    expect((await instancesOf('beta')).map((i: any) => i.id)).toEqual([b.server.deploymentInstance!.id]);

    // alpha keeps heartbeating; beta goes silent (a hung process) for more than 3 intervals.
    clock.advance(2 * HOUR);
    await a.server.deploymentInstance!.heartbeat();
    clock.advance(1.5 * HOUR);
    await a.server.deploymentInstance!.heartbeat();
    expect((await instancesOf('alpha'))[0]).toMatchObject({
      status: 'active',
      last_heartbeat_at: '2026-03-02T12:30:00.000Z',
    });
    expect((await instancesOf('beta'))[0]).toMatchObject({
      status: 'gone',
      last_heartbeat_at: '2026-03-02T09:00:00.000Z',
    });
    // A deployment whose only instance is gone can be deleted; one with a live instance cannot.
    const busy = await s.admin.delete('/v1/deployments/alpha');
    expectRefused(busy, 409, 'CONFLICT');
    expect(busy.body.error.message).toBe(`Deployment alpha has 1 live instance (${a.baseUrl}); stop them first.`);

    // A clean stop is recorded as such.
    await a.close();
    expect((await instancesOf('alpha'))[0]).toMatchObject({
      status: 'stopped',
      stopped_at: '2026-03-02T12:30:00.000Z',
    });

    // A day later both are forgotten: no longer listed, and pruned by the next heartbeat anywhere.
    clock.advance(25 * HOUR);
    expect(await instancesOf('alpha')).toEqual([]);
    expect(await instancesOf('beta')).toEqual([]);
    const c = await s.instance('alpha');
    await c.server.deploymentInstance!.heartbeat();
    const rows = await s.cp.server.db.selectFrom('deployment_instances').select('id').execute();
    expect(rows.map((r) => r.id)).toEqual([c.server.deploymentInstance!.id]);
    // The hung instance comes back: it registers again under its id.
    await b.server.deploymentInstance!.heartbeat();
    expect((await instancesOf('beta'))[0]).toMatchObject({ id: b.server.deploymentInstance!.id, status: 'active' });
  });

  it('refuses an instance older than the minimum gateway version of the running control plane, and shows the attempt', async () => {
    const s = await setUp();
    await s.admin.post('/v1/deployments', { name: 'A', slug: 'alpha', type: 'production' });
    await s.admin.post('/v1/deployments', { name: 'B', slug: 'beta', type: 'production' });
    // A newer release is running: it requires 0.2.0 of every instance that joins.
    const newer = await s.instance('alpha', {
      SVCGW_DEPLOYMENT_REPORTED_VERSION: '0.2.1',
      SVCGW_MIN_GATEWAY_VERSION: '0.2.0',
    });
    expect((await s.admin.get('/v1/deployments/beta')).body.minimum_gateway_version).toBe('0.2.0');

    const attempt = s.instance('beta', { SVCGW_DEPLOYMENT_REPORTED_VERSION: '0.1.5' });
    await expect(attempt).rejects.toBeInstanceOf(DeploymentRefusedError);
    const error = (await attempt.catch((e: unknown) => e)) as DeploymentRefusedError;
    expect(error.exitCode).toBe(1);
    const reason = `svcgw 0.1.5 cannot join deployment beta: the control plane's minimum gateway version is 0.2.0 (required by the running instance ${newer.server.deploymentInstance!.id} at ${newer.baseUrl}, svcgw 0.2.1); upgrade this instance to 0.2.0 or later`;
    expect(error.message).toBe(reason);
    const beta = (await s.admin.get('/v1/deployments/beta')).body;
    expect(beta.instances).toEqual([
      expect.objectContaining({ status: 'refused', version: '0.1.5', address: null, refusal_reason: reason }),
    ]);

    // An instance's own setting counts too.
    const own = await s.instance('beta', { SVCGW_MIN_GATEWAY_VERSION: '0.9.0' }).catch((e: unknown) => e);
    expect((own as Error).message).toMatch(
      /minimum gateway version is 0\.9\.0 \(this instance's min_gateway_version setting\)/,
    );

    // Once the newer release has stopped, the floor is this build's again.
    await newer.close();
    const joined = await s.instance('beta', { SVCGW_DEPLOYMENT_REPORTED_VERSION: '0.1.5' });
    expect(joined.server.deploymentInstance).not.toBeNull();
  });

  it('refuses to start for a deployment that does not exist', async () => {
    const s = await setUp();
    await s.admin.post('/v1/deployments', { name: 'Old', slug: 'old', type: 'production' });
    await s.admin.delete('/v1/deployments/old');
    for (const slug of ['nope', 'old']) {
      const error = (await s.instance(slug).catch((e: unknown) => e)) as DeploymentRefusedError;
      expect(error).toBeInstanceOf(DeploymentRefusedError);
      expect(error.exitCode).toBe(2);
      expect(error.message).toBe(
        `deployment ${slug} does not exist: create it first (svcgw deployments create --slug ${slug} --name … --type production, or POST /v1/deployments), then start this instance again`,
      );
    }
  });
});
