import { spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { REPO_ROOT, spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/start-test-server.js';

/** Whether something accepts connections on the port of `url`. */
function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVCGW_') && v !== undefined) env[k] = v;
  return env;
}

describe('stopping svcgw serve', () => {
  it('node bin/svcgw serve: SIGTERM stops it, exit 0, and the port is free', async () => {
    const server = await spawnServe(['--data-dir', makeTempDir()]);
    expect(await listening(server.url)).toBe(true);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(await listening(server.url)).toBe(false);
    expect(server.stdout()).toMatch(/"msg":"stopped"/);
  });

  it('npx svcgw serve (the README command): SIGTERM to npx stops the server and frees the port', async () => {
    const child = spawn('npx', ['svcgw', 'serve', '--port', '0', '--data-dir', makeTempDir()], {
      cwd: REPO_ROOT,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', () => undefined);
    // 'close' waits for every holder of the pipes: the server process too, not only npx.
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    onTestFinished(async () => {
      // Only if the test failed half-way: end what this test started, by its id.
      const pid = /"pid":(\d+)/.exec(out)?.[1];
      if (pid) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      }
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let url: string | undefined;
    for (let attempt = 0; attempt < 600 && !url; attempt++) {
      url = /"url":"(http:\/\/[^"]+)"/.exec(out)?.[1];
      if (!url) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(url).toBeDefined();
    expect(await listening(url!)).toBe(true);

    child.kill('SIGTERM'); // to npx (npm exec), as `kill <pid>` or a process manager would
    await closed;
    expect(await listening(url!)).toBe(false);
    expect(out).toMatch(/"msg":"stopped"/);
  }, 90_000);
});

const hasSystemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

describe('the systemd unit', () => {
  it.skipIf(!hasSystemdAnalyze)('deploy/svcgw.service passes systemd-analyze verify', () => {
    // systemd reports an unknown key, a bad value or a missing executable on stderr.
    const verify = spawnSync('systemd-analyze', ['verify', 'deploy/svcgw.service'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(verify.stderr).toBe('');
    expect(verify.status).toBe(0);
  });
});
