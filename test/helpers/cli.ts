import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, onTestFinished } from 'vitest';
import { apiClient } from './http.js';
import { makeTempDir, startTestServer } from './start-test-server.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = fileURLToPath(new URL('../../bin/svcgw', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `svcgw` CLI to completion (npm test builds dist/ first). */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runNode([CLI, ...args], env);
}

/** Runs `node` with these arguments to completion, from the repository's root. */
export function runNode(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      env: { ...cleanEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * How long `svcgw serve` may take to listen. Generous (three instances migrating one database in
 * turn on a loaded 2-core machine take ~20 s); past it the test fails with the server's output
 * instead of hanging until the test's own time-out with nothing to show.
 */
export const SERVE_LISTEN_LIMIT_MS = 60_000;

/** Starts `svcgw serve` as a real process on an ephemeral port and waits for it to listen. */
export async function spawnServe(args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    cwd: REPO_ROOT,
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // Registered before waiting, so a server that never listens is stopped too.
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let limit: NodeJS.Timeout | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    void exited.then((code) => reject(new Error(`svcgw serve exited with ${code} before listening:\n${out}\n${err}`)));
    limit = setTimeout(
      () =>
        reject(
          new Error(
            `svcgw serve (pid ${child.pid}) did not listen within ${SERVE_LISTEN_LIMIT_MS} ms:\n${out}\n${err}`,
          ),
        ),
      SERVE_LISTEN_LIMIT_MS,
    );
  }).finally(() => clearTimeout(limit));
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return { child, url, stdout: () => out, stderr: () => err, exited, stop };
}

/** The first match of `pattern` in a growing output, once it has appeared (within 10 s). */
export async function waitForOutput(output: () => string, pattern: RegExp): Promise<string> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const match = pattern.exec(output());
    if (match) return match[0];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`expected output matching ${pattern}, got:\n${output()}`);
}

/** The owner key a first `svcgw serve` printed (to stderr when stdout is not a terminal). */
export function ownerKeyOf(server: ServeProcess): Promise<string> {
  return waitForOutput(server.stderr, /svc-[A-Za-z0-9_-]{43}/);
}

/** The test runner's environment without SVCGW_* settings, so that only what a test sets applies. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVCGW_') && v !== undefined) env[k] = v;
  return env;
}

/** Runs the built CLI with `input` on its standard input (for --key-stdin, apply -f -). */
export function runCliWithInput(args: string[], input: string, env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO_ROOT,
      env: { ...cleanEnv(), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

export interface CliProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stdout has a line for which `match` is true (rejects after `timeoutMs`). */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** Starts a long-running CLI command (such as `logs tail`); it is killed when the test ends. */
export function spawnCli(args: string[], env: Record<string, string> = {}): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  const check = () => {
    const lines = out.split('\n').slice(0, -1);
    for (const waiter of [...waiters]) {
      const line = lines.find(waiter.match);
      if (line !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  };
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    check();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForLine: (match, timeoutMs = 10_000) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching line within ${timeoutMs} ms; stdout:\n${out}\nstderr:\n${err}`)),
          timeoutMs,
        );
        waiters.push({ match, resolve: (line) => (clearTimeout(timer), resolve(line)) });
        check();
      }),
    stop: async (signal = 'SIGINT') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** The built CLI pointed at a fresh in-process server through SVCGW_BASE_URL and SVCGW_API_KEY. */
export async function cliAgainstServer() {
  const server = await startTestServer();
  const env = { SVCGW_BASE_URL: server.baseUrl, SVCGW_API_KEY: server.adminKey, XDG_CONFIG_HOME: makeTempDir() };
  const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { ...env, ...extra });
  const ok = async (args: string[], extra: Record<string, string> = {}): Promise<any> => {
    const res = await cli([...args, '--json'], extra);
    expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
    return JSON.parse(res.stdout);
  };
  const fails = async (
    args: string[],
    code: number,
    message: RegExp,
    extra: Record<string, string> = {},
  ): Promise<CliResult> => {
    const res = await cli(args, extra);
    expect(res.code, `${args.join(' ')}: ${res.stdout}${res.stderr}`).toBe(code);
    expect(res.stderr).toMatch(message);
    return res;
  };
  return { server, env, cli, ok, fails, api: apiClient(server.baseUrl, server.adminKey) };
}
