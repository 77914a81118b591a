import { spawn, type ChildProcess } from 'node:child_process';
import { listeningPort } from './proc.js';

/** A process the benchmark started and must stop: only these are ever signalled, by PID. */
export interface BenchChild {
  name: string;
  pid: number;
  url: string;
  /** The last few kilobytes of its stdout and stderr, for a failure message. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
  alive(): boolean;
  /** Synchronous last resort for `process.on('exit')`. */
  killNow(): void;
}

const URL_LINE = /"url":"(http:\/\/[^"]+)"/;
const KEEP_OUTPUT = 16 * 1024;

/**
 * Starts `node <args>` and resolves with its URL: from a stdout JSON line holding `"url":"http://…"`
 * (what the mock provider and svcgw at log level info print), or else from the port the process
 * is seen listening on in /proc (svcgw at log level warn prints no address).
 */
export async function startNode(options: { name: string; args: string[]; cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<BenchChild> {
  const child = spawn(process.execPath, options.args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`${options.name}: could not start ${process.execPath}`);
  const pid = child.pid;
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-KEEP_OUTPUT);
  };
  // Always drained, so a chatty child never blocks on a full pipe during the load.
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;

  const url = await new Promise<string>((resolve, reject) => {
    let done = false;
    const finish = (error: Error | null, value?: string) => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearTimeout(timer);
      child.stdout.off('data', onData);
      if (error) reject(error);
      else resolve(value!);
    };
    const onData = () => {
      const match = URL_LINE.exec(out);
      if (match?.[1]) finish(null, match[1]);
    };
    child.stdout.on('data', onData);
    const poll = setInterval(() => {
      const port = listeningPort(pid);
      if (port !== null) finish(null, `http://127.0.0.1:${port}`);
    }, 50);
    const timer = setTimeout(() => finish(new Error(`${options.name} did not listen within ${options.timeoutMs ?? 30_000} ms:\n${out}`)), options.timeoutMs ?? 30_000);
    void exited.then(() => finish(new Error(`${options.name} exited (${child.exitCode ?? child.signalCode}) before listening:\n${out}`)));
  }).catch(async (error: unknown) => {
    await stopChild(child, exited, 2000);
    throw error;
  });

  return {
    name: options.name,
    pid,
    url,
    output: () => out,
    alive: running,
    stop: (graceMs = 10_000) => stopChild(child, exited, graceMs),
    killNow: () => {
      if (running()) child.kill('SIGKILL');
    },
  };
}

async function stopChild(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([exited.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)))]);
  clearTimeout(timer);
  if (timedOut && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
}
