import { spawn, type ChildProcess } from 'node:child_process';
import { listeningPort } from './proc.js';

/** A process the benchmark started and must stop: only these are ever signalled, by PID. */
export interface BenchChild {
  name: string;
  pid: number;
  url: string;
  /** The last few kilobytes of its stdout and stderr, for a failure message. */
  output(): string;
  alive(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const URL_LINE = /"url":"(http:\/\/[^"]+)"/;
const KEEP_OUTPUT = 16 * 1024;
const LISTEN_TIMEOUT_MS = 30_000;

/** Every child spawned here and not yet exited, from the moment of spawning (so Ctrl-C during start-up stops it too). */
const running = new Set<ChildProcess>();

/**
 * Starts `node <args>` and resolves with its URL: from a stdout JSON line holding `"url":"http://…"`
 * (what the mock provider and svcgw at log level info print), or else from the port the process
 * is seen listening on in /proc (svcgw at log level warn prints no address).
 */
export async function startNode(options: {
  name: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Called with every whole line the child writes to stdout or stderr (the soak reads its probe's lines). */
  onLine?: (line: string) => void;
}): Promise<BenchChild> {
  const child = spawn(process.execPath, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${options.name}: could not start ${process.execPath}`);
  const pid = child.pid;
  running.add(child);
  const exited = exitOf(child);
  void exited.then(() => running.delete(child));
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-KEEP_OUTPUT);
  };
  // Always drained, so a chatty child never blocks on a full pipe during the load.
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  if (options.onLine) {
    const onLine = options.onLine;
    for (const stream of [child.stdout, child.stderr]) {
      let partial = '';
      stream.on('data', (d: Buffer) => {
        const lines = (partial + d.toString()).split('\n');
        partial = (lines.pop() ?? '').slice(-KEEP_OUTPUT);
        for (const line of lines) onLine(line);
      });
    }
  }

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
    const timer = setTimeout(
      () => finish(new Error(`${options.name} did not listen within ${LISTEN_TIMEOUT_MS} ms:\n${out}`)),
      LISTEN_TIMEOUT_MS,
    );
    void exited.then(() =>
      finish(new Error(`${options.name} exited (${child.exitCode ?? child.signalCode}) before listening:\n${out}`)),
    );
  }).catch(async (error: unknown) => {
    await stop(child, 2000);
    throw error;
  });

  return {
    name: options.name,
    pid,
    url,
    output: () => out,
    alive: () => isRunning(child),
    stop: (graceMs = 10_000) => stop(child, graceMs),
  };
}

/** SIGTERM to every child still running, SIGKILL after `graceMs`; resolves once all have exited. */
export async function stopAll(graceMs = 10_000): Promise<void> {
  await Promise.all([...running].map((child) => stop(child, graceMs)));
}

/** Synchronous last resort for `process.on('exit')`. */
export function killAllNow(): void {
  for (const child of running) if (isRunning(child)) child.kill('SIGKILL');
}

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

function exitOf(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!isRunning(child)) resolve();
    else child.once('exit', () => resolve());
  });
}

async function stop(child: ChildProcess, graceMs: number): Promise<void> {
  if (!isRunning(child)) return;
  const exited = exitOf(child);
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs))),
  ]);
  clearTimeout(timer);
  if (timedOut && isRunning(child)) {
    child.kill('SIGKILL');
    await exited;
  }
}
