import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, spawnCli } from '../helpers/cli.js';
import { startGateway as startGatewayHarness, type GatewayHarness } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import OpenAI from 'openai';

/** Listeners the server has of its own (the /metrics registry), before any tail follows. */
const ownListeners = new WeakMap<GatewayHarness, number>();

async function startGateway(): Promise<GatewayHarness> {
  const gw = await startGatewayHarness();
  ownListeners.set(gw, gw.server.requestLogs.listenerCount);
  return gw;
}

/** Resolves once `count` tails follow the server's records. */
async function following(gw: GatewayHarness, count: number): Promise<void> {
  const own = ownListeners.get(gw) ?? 0;
  for (let i = 0; i < 200 && gw.server.requestLogs.listenerCount < own + count; i++) await sleep(25);
  expect(gw.server.requestLogs.listenerCount - own).toBe(count);
}

const chat = (gw: GatewayHarness, headers: Record<string, string> = {}) =>
  gw
    .openai({ ...gw.viaMock, ...headers })
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });

describe('svcgw logs tail (JSON lines when stdout is not a terminal)', () => {
  it('prints one JSON line per request made while it runs, and exits 0 on Ctrl+C', async () => {
    const gw = await startGateway();
    const env = { SVCGW_BASE_URL: gw.baseUrl, SVCGW_API_KEY: gw.adminKey, XDG_CONFIG_HOME: makeTempDir() };
    await chat(gw); // before the tail: never shown
    const tail = spawnCli(['logs', 'tail'], env);
    await following(gw, 1);

    await chat(gw);
    await chat(gw);
    await tail.waitForLine((_line) => tail.stdout().split('\n').filter(Boolean).length >= 2);
    const records = tail
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(records).toHaveLength(2);
    for (const record of records) {
      expect(record).toMatchObject({
        object: 'log',
        status_code: 200,
        provider: 'openai',
        model: 'gpt-4o-mini',
        endpoint_type: 'chatComplete',
      });
      expect(record.total_tokens).toBeGreaterThan(0);
      expect(typeof record.latency_ms).toBe('number');
      expect(record).not.toHaveProperty('request_body');
    }
    // The same records the logs API lists.
    const listed = await runCli(['logs', 'list', '--json', '--page-size', '10'], env);
    expect(JSON.parse(listed.stdout).data.map((r: { id: string }) => r.id)).toEqual(
      expect.arrayContaining(records.map((r) => r.id)),
    );

    expect(await tail.stop('SIGINT')).toBe(0);
    const own = ownListeners.get(gw)!;
    for (let i = 0; i < 100 && gw.server.requestLogs.listenerCount > own; i++) await sleep(20);
    expect(gw.server.requestLogs.listenerCount).toBe(own); // the server let go of the follower
  });

  it('filters by status, provider and model on the server', async () => {
    const gw = await startGateway();
    const env = { SVCGW_BASE_URL: gw.baseUrl, SVCGW_API_KEY: gw.adminKey, XDG_CONFIG_HOME: makeTempDir() };
    const failures = spawnCli(['logs', 'tail', '--status', '400'], env);
    const models = spawnCli(['logs', 'tail', '--json', '--provider', 'openai', '--model', 'gpt-4o'], env);
    await following(gw, 2);

    await chat(gw); // 200, gpt-4o-mini: neither
    await expect(chat(gw, { 'x-service-provider': 'no-such-provider' })).rejects.toThrow(); // 400 UNKNOWN_PROVIDER
    await gw.openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

    const failure = JSON.parse(await failures.waitForLine(Boolean));
    expect(failure).toMatchObject({ status_code: 400, error_code: 'UNKNOWN_PROVIDER' });
    const model = JSON.parse(await models.waitForLine((line) => JSON.parse(line).status_code === 200));
    expect(model.model).toBe('gpt-4o');
    await sleep(200);
    expect(failures.stdout().trim().split('\n')).toHaveLength(1);
    expect(
      models
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).model),
    ).toEqual(expect.arrayContaining(['gpt-4o']));
    expect(models.stdout()).not.toContain('gpt-4o-mini');
  });

  it('--status 4xx follows a class of statuses; logs list, which filters one code, says so', async () => {
    const gw = await startGateway();
    const env = { SVCGW_BASE_URL: gw.baseUrl, SVCGW_API_KEY: gw.adminKey, XDG_CONFIG_HOME: makeTempDir() };
    const clientErrors = spawnCli(['logs', 'tail', '--status', '4xx'], env);
    await following(gw, 1);

    await chat(gw); // 200: not shown, and it comes first on the stream
    await expect(chat(gw, { 'x-service-provider': 'no-such-provider' })).rejects.toThrow(); // 400
    const shown = JSON.parse(await clientErrors.waitForLine(Boolean));
    expect(shown).toMatchObject({ status_code: 400, error_code: 'UNKNOWN_PROVIDER' });
    expect(clientErrors.stdout().trim().split('\n')).toHaveLength(1);

    const list = await runCli(['logs', 'list', '--status', '4xx'], env);
    expect(list.code).toBe(2);
    expect(list.stderr).toMatch(/filters by one status code.*logs export create --status 4xx/);
    expect((await runCli(['logs', 'tail', '--status', '45'], env)).stderr).toMatch(/a class \(4xx, 5xx\)/);
  });

  it('shows a workspace key only its own workspace, and refuses a key without logs.list', async () => {
    const gw = await startGateway();
    const admin = gw.admin;
    await admin.post('/v1/workspaces', { name: 'Team B', slug: 'team-b' });
    const mk = async (workspace: string, scopes: string[]) =>
      (await admin.post('/v1/api-keys/workspace/service', { name: `k-${workspace}`, workspace_id: workspace, scopes }))
        .body.key as string;
    const teamB = await mk('team-b', ['logs.list', 'completions.write']);
    const noLogs = await mk('team-b', ['completions.write']);
    const base = { SVCGW_BASE_URL: gw.baseUrl, XDG_CONFIG_HOME: makeTempDir() };

    const refused = await runCli(['logs', 'tail'], { ...base, SVCGW_API_KEY: noLogs });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/logs\.list/);
    const other = await runCli(['logs', 'tail', '--workspace', 'default'], { ...base, SVCGW_API_KEY: teamB });
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/WORKSPACE_FORBIDDEN/);

    const tail = spawnCli(['logs', 'tail'], { ...base, SVCGW_API_KEY: teamB });
    await following(gw, 1);
    await chat(gw); // admin key: counted in the default workspace
    await chat(gw, { 'x-service-api-key': teamB });
    const record = JSON.parse(await tail.waitForLine(Boolean));
    const teamBId = (await admin.get('/v1/workspaces/team-b')).body.id;
    expect(record.workspace_id).toBe(teamBId);
    await sleep(200);
    expect(tail.stdout().trim().split('\n')).toHaveLength(1);
  });

  it("follows only the caller's own keys when data visibility is off for its role", async () => {
    const gw = await startGateway();
    expect((await gw.admin.put('/v1/settings/security', { membersViewAllData: false })).status).toBe(200);
    const invite = await gw.admin.post('/v1/invites', {
      email: 'mo@example.com',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
    });
    const joined = await apiClient(gw.baseUrl).post('/v1/invites/accept', { token: invite.body.token });
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    const memberKey = joined.body.api_key as string;

    const tail = spawnCli(['logs', 'tail'], {
      SVCGW_BASE_URL: gw.baseUrl,
      SVCGW_API_KEY: memberKey,
      XDG_CONFIG_HOME: makeTempDir(),
    });
    await following(gw, 1);
    await chat(gw); // the admin's key: not the member's
    await chat(gw, { 'x-service-api-key': memberKey });
    const record = JSON.parse(await tail.waitForLine(Boolean));
    expect(record.api_key_id).toBe(joined.body.api_key_id);
    await chat(gw);
    await sleep(300);
    expect(tail.stdout().trim().split('\n')).toHaveLength(1);
  });

  it('says "reconnecting…" when the server goes away, and follows the restarted server', async () => {
    const first = await startTestServer({ autoClose: false });
    const port = Number(new URL(first.baseUrl).port);
    const own = first.server.requestLogs.listenerCount;
    const mock = await startMockOpenAI();
    onTestFinished(() => mock.close());
    const tail = spawnCli(['logs', 'tail'], {
      SVCGW_BASE_URL: first.baseUrl,
      SVCGW_API_KEY: first.adminKey,
      XDG_CONFIG_HOME: makeTempDir(),
    });
    for (let i = 0; i < 200 && first.server.requestLogs.listenerCount === own; i++) await sleep(25);
    await first.close(); // open streams do not hold the shutdown
    for (let i = 0; i < 200 && !/reconnecting…/.test(tail.stderr()); i++) await sleep(25);
    expect(tail.stderr()).toMatch(/^svcgw: reconnecting… .*next try in \d\.\d s$/m);
    expect(tail.child.exitCode).toBeNull(); // still running

    const second = await startTestServer({ dataDir: first.dataDir, port });
    const chat = new OpenAI({
      baseURL: `${second.baseUrl}/v1`,
      apiKey: 'provider-secret-key',
      maxRetries: 0,
      defaultHeaders: {
        'x-service-api-key': first.adminKey,
        'x-service-provider': 'openai',
        'x-service-custom-host': mock.baseUrl,
      },
    });
    for (let i = 0; i < 400 && second.server.requestLogs.listenerCount === own; i++) await sleep(25);
    await chat.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const record = JSON.parse(await tail.waitForLine(Boolean));
    expect(record).toMatchObject({ status_code: 200, model: 'gpt-4o-mini' });
    expect(tail.stderr()).toMatch(/^svcgw: reconnected$/m);
    expect(await tail.stop('SIGINT')).toBe(0);
  });

  it('--in-flight: a line as a request begins, and its record with the same id when it ends', async () => {
    const gw = await startGatewayHarness({ mock: { holdStream: true } });
    const own = gw.server.requestLogs.listenerCount;
    const tail = spawnCli(['logs', 'tail', '--in-flight'], {
      SVCGW_BASE_URL: gw.baseUrl,
      SVCGW_API_KEY: gw.adminKey,
      XDG_CONFIG_HOME: makeTempDir(),
    });
    for (let i = 0; i < 200 && gw.server.requestLogs.listenerCount === own; i++) await sleep(25);
    const stream = await gw
      .openai()
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'slow' }], stream: true });
    const started = JSON.parse(await tail.waitForLine((line) => line.includes('log.start')));
    expect(started).toMatchObject({ object: 'log.start', model: 'gpt-4o', endpoint_type: 'chatComplete' });
    expect(started).not.toHaveProperty('status_code');
    await sleep(100);
    expect(tail.stdout().trim().split('\n')).toHaveLength(1); // held by the provider: still in flight
    gw.mock.releaseStreams();
    for await (const _chunk of stream) void _chunk;
    const record = JSON.parse(await tail.waitForLine((line) => line.includes('"status_code"')));
    expect(record).toMatchObject({ id: started.id, status_code: 200 });
  });
});
