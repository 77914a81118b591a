import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { validPolicy } from '../helpers/fixtures.js';
import { ownerKeyOf, runCli, spawnServe, waitForOutput } from '../helpers/cli.js';
import { apiClient } from '../helpers/http.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const KEY_RE = /svc-[A-Za-z0-9_-]{43}/g;

describe('svcgw CLI basics', () => {
  it('prints its version and help, and exits 2 on a usage error', async () => {
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/serve/);
    expect(help.stdout).toMatch(/init/);
    const serveHelp = await runCli(['serve', '--help']);
    expect(serveHelp.stdout).toMatch(/--data-dir/);
    expect(serveHelp.stdout).toMatch(/SVCGW_PORT/);
    expect((await runCli(['frobnicate'])).code).toBe(2);
  });

  it('stops start-up on a bad setting with a message that names it', async () => {
    const res = await runCli(['serve', '--port', 'eighty', '--data-dir', makeTempDir()]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/port \(from --port\)/);
    const env = await runCli(['serve', '--data-dir', makeTempDir()], { SVCGW_LOG_LEVEL: 'chatty' });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/log_level \(from SVCGW_LOG_LEVEL\)/);
  });
});

describe('svcgw serve lifecycle', () => {
  it('bootstraps on the first start, prints the key once, and keeps all data across a restart', async () => {
    const dataDir = makeTempDir();
    const first = await spawnServe(['--data-dir', dataDir]);
    const adminKey = await ownerKeyOf(first);
    // Stdout is a pipe here, so the key went to stderr, once, and never to stdout.
    expect(first.stderr().match(KEY_RE)).toHaveLength(1);
    expect(first.stdout()).not.toContain(adminKey);
    const admin = apiClient(first.url, adminKey);
    expect((await admin.get('/v1/health')).status).toBe(200);
    const policy = await admin.post(
      '/v1/policies/rate-limits',
      validPolicy({ workspace_id: 'default', name: 'survives' }),
    );
    expect(policy.status).toBe(200);
    expect(await first.stop('SIGTERM')).toBe(0);
    // Stdout is the JSON log stream: JSON lines only, and the key in none of them.
    const lines = first.stdout().split('\n').filter(Boolean);
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    expect(first.stdout()).not.toContain(adminKey);

    const second = await spawnServe(['--data-dir', dataDir]);
    expect(second.stdout() + second.stderr()).not.toMatch(KEY_RE);
    const again = apiClient(second.url, adminKey);
    expect((await again.get(`/v1/policies/rate-limits/${policy.body.id}`)).body.name).toBe('survives');
    expect((await again.get('/v1/audit-logs')).body.total).toBe(1);
    expect(await second.stop('SIGINT')).toBe(0);
  });

  it('uses SVCGW_BOOTSTRAP_ADMIN_KEY on the first start and does not print it', async () => {
    const dataDir = makeTempDir();
    const chosen = `ci-${'k'.repeat(40)}`;
    const server = await spawnServe(['--data-dir', dataDir], { SVCGW_BOOTSTRAP_ADMIN_KEY: chosen });
    await waitForOutput(server.stderr, /SVCGW_BOOTSTRAP_ADMIN_KEY/);
    expect(server.stdout() + server.stderr()).not.toContain(chosen);
    expect((await apiClient(server.url, chosen).get('/v1/workspaces')).status).toBe(200);
  });

  it('svcgw init bootstraps without serving and prints the key as JSON; a second init prints none', async () => {
    const dataDir = makeTempDir();
    const init = await runCli(['init', '--json', '--data-dir', dataDir]);
    expect(init.code).toBe(0);
    const { admin_api_key: key } = JSON.parse(init.stdout) as { admin_api_key: string };
    expect(key).toMatch(KEY_RE);
    const repeat = await runCli(['init', '--json', '--data-dir', dataDir]);
    expect(JSON.parse(repeat.stdout)).toEqual({ admin_api_key: null, already_initialised: true });

    const server = await spawnServe(['--data-dir', dataDir]);
    expect(server.stdout() + server.stderr()).not.toMatch(KEY_RE);
    expect((await apiClient(server.url, key).get('/v1/workspaces')).body.total).toBe(1);
  });

  it('on SIGTERM finishes requests already in flight, loses nothing, and exits 0', async () => {
    const dataDir = makeTempDir();
    const server = await spawnServe(['--data-dir', dataDir]);
    const adminKey = await ownerKeyOf(server);

    // Five uploads are half sent when the signal arrives; each must still complete.
    const bodies = Array.from({ length: 5 }, () => new PassThrough());
    const responses = bodies.map((body, i) =>
      request(`${server.url}/v1/policies/rate-limits`, {
        method: 'POST',
        headers: { 'x-service-api-key': adminKey, 'content-type': 'application/json' },
        body,
      }).then(async (res) => ({ status: res.statusCode, body: (await res.body.json()) as { id: string }, i })),
    );
    const payloads = bodies.map((_, i) =>
      JSON.stringify(validPolicy({ workspace_id: 'default', name: `in-flight-${i}` })),
    );
    bodies.forEach((body, i) => body.write(payloads[i]!.slice(0, 20)));
    await sleep(300); // let the server accept all five before the signal
    server.child.kill('SIGTERM');
    await sleep(200);
    bodies.forEach((body, i) => body.end(payloads[i]!.slice(20)));

    const results = await Promise.all(responses);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await server.exited).toBe(0);

    const restarted = await spawnServe(['--data-dir', dataDir]);
    const listed = await apiClient(restarted.url, adminKey).get('/v1/policies/rate-limits');
    expect(listed.body.data.map((p: { name: string }) => p.name).sort()).toEqual([
      'in-flight-0',
      'in-flight-1',
      'in-flight-2',
      'in-flight-3',
      'in-flight-4',
    ]);
    expect((await apiClient(restarted.url, adminKey).get('/v1/audit-logs')).body.total).toBe(5);
  });
});
