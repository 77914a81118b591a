import { randomBytes } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, spawnServe, type ServeProcess } from '../helpers/cli.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import { sharedInstancesEnv } from '../helpers/postgres.js';
import { postgresAvailable, redisAvailable } from '../helpers/services.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';
import { expectRefused } from '../helpers/tenant-pair.js';

/**
 * Real `svcgw serve --deployment <slug>` processes on one database, created through an
 * in-process control-plane server that joins no deployment.
 */
const ADMIN_KEY = `deployments-serve-${'s'.repeat(32)}`;
const MASTER_KEY = 'd1'.repeat(32);
const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }], max_tokens: 5 };
const hasScaleOut = (await postgresAvailable()) && (await redisAvailable());

/** The deployment as the control plane shows it, once `ready` holds (instances register just after they listen). */
async function deploymentWhen(admin: ApiClient, slug: string, ready: (body: any) => boolean): Promise<any> {
  let body: any;
  for (let attempt = 0; attempt < 200; attempt++) {
    body = (await admin.get(`/v1/deployments/${slug}`)).body;
    if (ready(body)) return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`deployment ${slug} never got there: ${JSON.stringify(body)}`);
}

/** A per-day limit is counted in one UTC day: keep clear of midnight. */
async function awayFromDayBoundary(): Promise<void> {
  const now = new Date();
  const left = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime();
  if (left < 30_000) await new Promise((resolve) => setTimeout(resolve, left + 1000));
}

describe('svcgw serve --deployment', () => {
  it('registers instances under two slugs; each applies its own deployment; too old a version and an unknown slug are refused', async () => {
    await awayFromDayBoundary();
    const dataDir = makeTempDir();
    const mock = await startMockOpenAI();
    onTestFinished(() => mock.close());
    const env = { SVCGW_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY, SVCGW_MASTER_KEY: MASTER_KEY };
    const cp = await startTestServer({ dataDir, env });
    const admin = apiClient(cp.baseUrl, ADMIN_KEY);
    await createWorkspace(admin, 'Team A', 'team-a');
    await createWorkspace(admin, 'Team B', 'team-b');
    const keyOf = async (workspace: string) =>
      (await createWorkspaceKey(admin, { workspace_id: workspace, scopes: ['completions.write'] })).key;
    const keys = { a: await keyOf('team-a'), b: await keyOf('team-b') };
    for (const [slug, type, workspace] of [
      ['alpha', 'production', 'team-a'],
      ['beta', 'non-production', 'team-b'],
    ])
      expect(
        (
          await admin.post('/v1/deployments', {
            name: slug,
            slug,
            type,
            allowed_workspaces: [workspace],
            rate_limits: slug === 'alpha' ? [{ type: 'requests', unit: 'rpd', value: 3 }] : null,
          })
        ).status,
      ).toBe(200);

    // alpha runs this build; beta plays a newer release, which requires 0.2.0 of instances joining after it.
    const alpha = await spawnServe(['--data-dir', dataDir, '--deployment', 'alpha'], env);
    const beta = await spawnServe(['--data-dir', dataDir], {
      ...env,
      SVCGW_DEPLOYMENT: 'beta',
      SVCGW_DEPLOYMENT_REPORTED_VERSION: '0.2.0',
      SVCGW_MIN_GATEWAY_VERSION: '0.2.0',
    });
    const alphaShown = await deploymentWhen(admin, 'alpha', (d) => d.instances.length === 1);
    expect(alphaShown.instances[0]).toMatchObject({
      status: 'active',
      version: '0.1.0',
      address: alpha.url,
      pid: alpha.child.pid,
      refusal_reason: null,
    });
    expect(Date.parse(alphaShown.instances[0].started_at)).not.toBeNaN();
    const betaShown = await deploymentWhen(admin, 'beta', (d) => d.instances.length === 1);
    expect(betaShown.instances[0]).toMatchObject({ status: 'active', version: '0.2.0', address: beta.url });
    expect(betaShown.minimum_gateway_version).toBe('0.2.0');

    // Each instance serves its deployment's workspace and refuses the other's.
    const viaMock = {
      'x-service-provider': 'openai',
      'x-service-custom-host': mock.baseUrl,
      authorization: 'Bearer k',
    };
    const call = (server: ServeProcess, key: string) =>
      apiClient(server.url, key).post('/v1/chat/completions', chat, viaMock);
    expect((await call(alpha, keys.a)).status).toBe(200);
    expect((await call(beta, keys.b)).status).toBe(200);
    const wrongA = await call(alpha, keys.b);
    expectRefused(wrongA, 403, 'DEPLOYMENT_FORBIDDEN');
    expect(wrongA.body.error.message).toMatch(/^Workspace team-b is not served by deployment alpha/);
    const wrongB = await call(beta, keys.a);
    expectRefused(wrongB, 403, 'DEPLOYMENT_FORBIDDEN');
    expect(wrongB.body.error.message).toMatch(/^Workspace team-a is not served by deployment beta/);

    // alpha's limit of 3 a day holds on alpha, and is no concern of beta's.
    expect((await call(alpha, keys.a)).status).toBe(200);
    expect((await call(alpha, keys.a)).status).toBe(200);
    const limited = await call(alpha, keys.a);
    expectRefused(limited, 429, 'RATE_LIMITED');
    expect(limited.body.error.message).toMatch(/of deployment alpha allows 3 requests/);
    expect((await call(beta, keys.b)).status).toBe(200);
    expect(mock.requests).toHaveLength(5);

    // This build is older than what the running beta requires: refused, and the attempt is listed.
    const old = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--deployment', 'alpha'], env);
    expect(old.code, old.stderr).toBe(1);
    expect(old.stderr).toContain(
      "svcgw: svcgw 0.1.0 cannot join deployment alpha: the control plane's minimum gateway version is 0.2.0 (required by the running instance",
    );
    const withRefusal = (await admin.get('/v1/deployments/alpha')).body.instances;
    expect(withRefusal.map((i: any) => [i.status, i.version])).toEqual([
      ['active', '0.1.0'],
      ['refused', '0.1.0'],
    ]);
    expect(withRefusal[1].refusal_reason).toMatch(/upgrade this instance to 0\.2\.0 or later$/);

    // A slug that names no deployment is a settings mistake: exit 2, before anything listens.
    const unknown = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--deployment', 'gamma'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('svcgw: deployment gamma does not exist: create it first');
    const invalid = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--deployment', 'Not A Slug'], env);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('deployment (from --deployment): must be the slug of a deployment');

    // A clean stop is recorded; the refused attempt stays listed beside it.
    expect(await beta.stop('SIGTERM')).toBe(0);
    const stopped = (await admin.get('/v1/deployments/beta')).body.instances;
    expect(stopped.map((i: any) => i.status)).toEqual(['stopped']);
    expect(stopped[0].stopped_at).not.toBeNull();
    expect(await alpha.stop('SIGTERM')).toBe(0);
  });

  it.skipIf(!hasScaleOut)(
    "counts a deployment's rate limit across its instances through Redis (PostgreSQL)",
    async () => {
      await awayFromDayBoundary();
      const mock = await startMockOpenAI();
      onTestFinished(() => mock.close());
      const env = {
        ...(await sharedInstancesEnv()),
        SVCGW_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
        SVCGW_MASTER_KEY: MASTER_KEY,
        SVCGW_REDIS_KEY_PREFIX: `svcgw-deployments-${randomBytes(6).toString('hex')}:`,
      };
      const cp = await startTestServer({ env });
      const admin = apiClient(cp.baseUrl, ADMIN_KEY);
      await admin.post('/v1/deployments', {
        name: 'Edge',
        slug: 'edge',
        type: 'production',
        rate_limits: [{ type: 'requests', unit: 'rpd', value: 4 }],
      });
      const first = await spawnServe(['--data-dir', makeTempDir(), '--deployment', 'edge'], env);
      const second = await spawnServe(['--data-dir', makeTempDir(), '--deployment', 'edge'], env);
      const shown = await deploymentWhen(admin, 'edge', (d) => d.instances.length === 2);
      expect(shown.instances.map((i: any) => i.address).sort()).toEqual([first.url, second.url].sort());

      const viaMock = {
        'x-service-provider': 'openai',
        'x-service-custom-host': mock.baseUrl,
        authorization: 'Bearer k',
      };
      const statuses: number[] = [];
      for (const server of [first, second, first, second, first, second])
        statuses.push((await apiClient(server.url, ADMIN_KEY).post('/v1/chat/completions', chat, viaMock)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      // The control plane is not in the deployment: not limited by it.
      expect((await admin.post('/v1/chat/completions', chat, viaMock)).status).toBe(200);
      expect(await first.stop('SIGTERM')).toBe(0);
      expect(await second.stop('SIGTERM')).toBe(0);
    },
  );
});
