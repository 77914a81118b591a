/**
 * Patterns written by admins run on a worker thread with a time limit: a pattern that
 * backtracks catastrophically (`(a+)+$`) would otherwise block the event loop, which no check
 * time-out can interrupt. A runaway pattern costs the worker (it is terminated and replaced),
 * never the gateway. One warm worker serves every test: a message each way costs microseconds,
 * where a vm time limit started and joined a watchdog thread on every test.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

/** Wall-clock time: generous, so that a harmless pattern on a starved machine is not cut off. */
export const REGEX_TIME_LIMIT_MS = 1_000;

/** A compile error's message, or null when the pattern compiles. */
export function regexProblem(source: string, flags = ''): string | null {
  try {
    new RegExp(source, flags);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : 'invalid regular expression';
  }
}

// The worker keeps compiled patterns by source; it answers {id, result} or {id, error}.
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const port = workerData.port;
const compiled = new Map();
port.on('message', ({ id, source, flags, text }) => {
  try {
    const key = flags + '/' + source;
    let pattern = compiled.get(key);
    if (pattern === undefined) {
      if (compiled.size >= 1000) compiled.clear();
      pattern = new RegExp(source, flags);
      compiled.set(key, pattern);
    }
    pattern.lastIndex = 0;
    port.postMessage({ id, result: pattern.test(text) });
  } catch (error) {
    port.postMessage({ id, error: String(error && error.message || error) });
  }
});
`;

interface Pending {
  source: string;
  flags: string;
  text: string;
  limitMs: number;
  timer: ReturnType<typeof setTimeout> | null;
  resolve: (matched: boolean) => void;
  reject: (error: Error) => void;
}

interface Reply {
  id: number;
  result?: boolean;
  error?: string;
}

let worker: Worker | null = null;
let port: MessagePort | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

function start(): MessagePort {
  const channel = new MessageChannel();
  worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { port: channel.port2 },
    transferList: [channel.port2],
    resourceLimits: { maxOldGenerationSizeMb: 64 },
  });
  worker.unref();
  worker.on('error', () => restart(null));
  port = channel.port1;
  port.on('message', settle);
  port.unref();
  return port;
}

function settle(reply: Reply): void {
  const entry = pending.get(reply.id);
  if (!entry) return;
  pending.delete(reply.id);
  if (entry.timer) clearTimeout(entry.timer);
  if (reply.error !== undefined) entry.reject(new Error(reply.error));
  else entry.resolve(reply.result === true);
}

/** Replaces the worker; every test still waiting is sent again, except `failed` (which ran out of time). */
function restart(failed: number | null): void {
  const old = worker;
  worker = null;
  port?.close();
  port = null;
  void old?.terminate();
  const waiting = [...pending.entries()].filter(([id]) => id !== failed);
  pending.clear();
  for (const [, entry] of waiting) {
    if (entry.timer) clearTimeout(entry.timer);
    send(entry);
  }
}

function send(entry: Pending): void {
  const id = ++nextId;
  pending.set(id, entry);
  (port ?? start()).postMessage({ id, source: entry.source, flags: entry.flags, text: entry.text });
  entry.timer = setTimeout(() => {
    // Answers already on their way (the event loop was busy, not the pattern) count.
    for (let reply = port && receiveMessageOnPort(port); reply; reply = port && receiveMessageOnPort(port))
      settle(reply.message as Reply);
    if (!pending.has(id)) return;
    restart(id);
    entry.reject(new Error(`the pattern ran longer than ${entry.limitMs} ms on this text`));
  }, entry.limitMs);
  entry.timer.unref();
}

/** `new RegExp(source, flags).test(text)` on the worker; rejects when it runs past the limit. */
export function testWithin(source: string, text: string, limitMs = REGEX_TIME_LIMIT_MS, flags = ''): Promise<boolean> {
  return new Promise((resolve, reject) => {
    send({ source, flags, text, limitMs, timer: null, resolve, reject });
  });
}
