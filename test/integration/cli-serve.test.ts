import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { REPO_ROOT, spawnServe } from '../helpers/cli.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';

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

describe('the listening line', () => {
  it.each(['warn', 'error'])(
    'is written at SVCGW_LOG_LEVEL=%s, with the address --port 0 chose, and nothing at info besides',
    async (level) => {
      const server = await spawnServe(['--data-dir', makeTempDir()], { SVCGW_LOG_LEVEL: level });
      const lines = server
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; url?: string });
      const listeningLine = lines.find((line) => line.msg === 'svcgw listening');
      expect(listeningLine).toMatchObject({ level: 30, url: server.url });
      expect(new URL(server.url).port).not.toBe('0');
      const health = await fetch(`${server.url}/v1/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });
      // The level still holds for every other line: no migration or other info line.
      expect(lines.filter((line) => line.level < 40 && line !== listeningLine)).toEqual([]);
      expect(await server.stop('SIGTERM')).toBe(0);
    },
  );

  it('is not written when logging is silenced (silent)', async () => {
    const quiet = await startTestServer({ env: { SVCGW_LOG_LEVEL: 'warn' } });
    expect(quiet.logLines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toContain('svcgw listening');
    const silent = await startTestServer({ env: { SVCGW_LOG_LEVEL: 'silent' } });
    expect((await fetch(`${silent.baseUrl}/v1/health`)).status).toBe(200);
    expect(silent.logLines).toEqual([]);
  });
});

// A module hook (preloaded with --import) that writes the URL of every ES module loaded to $MODULE_TRACE.
const TRACE_HOOKS = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.MODULE_TRACE, url + '\\n');
  return next(url, context);
}`;
const TRACE_REGISTER = `import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);`;
// Preloaded with --require: CommonJS modules required by others (fastify's own) pass no ES module hook.
const TRACE_REQUIRE = `const Module = require('node:module');
const { appendFileSync } = require('node:fs');
const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) {
  appendFileSync(process.env.MODULE_TRACE, filename + '\\n');
  return compile.call(this, content, filename);
};`;

describe('what svcgw serve loads at start', () => {
  it('neither the admin commands nor the MCP and A2A SDKs: they load on first use (issue #19)', async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, 'hooks.mjs'), TRACE_HOOKS);
    writeFileSync(join(dir, 'register.mjs'), TRACE_REGISTER);
    const trace = join(dir, 'modules.txt');
    const server = await spawnServe(['--data-dir', makeTempDir()], {
      NODE_OPTIONS: `--import=${pathToFileURL(join(dir, 'register.mjs')).href}`,
      MODULE_TRACE: trace,
    });
    const loaded = readFileSync(trace, 'utf8').split('\n');
    const matching = (pattern: RegExp) => loaded.filter((url) => pattern.test(url));
    // The trace sees what serve does load: its own command, svcgw's MCP and agent modules.
    expect(matching(/\/dist\/src\/cli\/commands\/serve\.js$/)).toHaveLength(1);
    expect(matching(/\/dist\/src\/mcp\/upstream-session\.js$/)).toHaveLength(1);
    expect(matching(/\/dist\/src\/agents\/card-reader\.js$/)).toHaveLength(1);
    expect(matching(/\/node_modules\/@modelcontextprotocol\//)).toEqual([]);
    expect(matching(/\/node_modules\/@a2a-js\//)).toEqual([]);
    expect(matching(/\/dist\/src\/cli\/(program|commands\/(keys|apply|mcp-servers|logs|workspaces))\.js$/)).toEqual([]);
    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it("not @fastify/swagger, nor fastify's JSON-schema compilers: the OpenAPI document is built, and swagger loaded, on its first request", async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, 'hooks.mjs'), TRACE_HOOKS);
    writeFileSync(join(dir, 'register.mjs'), TRACE_REGISTER);
    writeFileSync(join(dir, 'require.cjs'), TRACE_REQUIRE);
    const trace = join(dir, 'modules.txt');
    const server = await spawnServe(['--data-dir', makeTempDir()], {
      NODE_OPTIONS: `--import=${pathToFileURL(join(dir, 'register.mjs')).href} --require=${join(dir, 'require.cjs')}`,
      MODULE_TRACE: trace,
    });
    const loaded = (pattern: RegExp) =>
      readFileSync(trace, 'utf8')
        .split('\n')
        .some((path) => pattern.test(path));
    // The trace sees CommonJS modules fastify requires: its own core, and the zod compilers' package.
    expect(loaded(/\/node_modules\/fastify\/lib\/route\.js$/)).toBe(true);
    expect(loaded(/\/node_modules\/fastify-type-provider-zod\//)).toBe(true);
    expect(loaded(/\/node_modules\/@fastify\/(ajv-compiler|fast-json-stringify-compiler)\//)).toBe(false);
    expect(loaded(/\/node_modules\/fast-json-stringify\/index\.js$/)).toBe(false);
    const swaggerLoaded = () => loaded(/\/node_modules\/(@fastify\/swagger|yaml)\//);
    expect(swaggerLoaded()).toBe(false);
    const res = await fetch(`${server.url}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const document = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toContain('/v1/chat/completions');
    expect(swaggerLoaded()).toBe(true);
    expect(await server.stop('SIGTERM')).toBe(0);
  });
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
