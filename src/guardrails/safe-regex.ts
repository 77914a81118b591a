/**
 * Patterns written by admins run on a worker thread with a time limit: a pattern that
 * backtracks catastrophically (`(a+)+$`) would otherwise block the event loop, which no check
 * time-out can interrupt. A runaway pattern costs the worker (it is terminated and replaced),
 * never the gateway. One warm worker serves every test.
 *
 * The tests asked for in one turn of the event loop (the regex checks of every request that
 * turn) go to the worker in one message, and one watchdog timer guards them all: under load a
 * message and a timer per test cost more than the tests. The worker still answers each test as
 * soon as it has run it, in the order sent: the first test not answered is the one running, and
 * its time limit counts from the answer before it (or from when it reached an idle worker). Only
 * that test is blamed when time is up; the tests queued behind it are sent to the new worker.
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

// The worker keeps compiled patterns by source; it gets an array of tests and answers each at
// once, in order, with {id, result} or {id, error}.
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const port = workerData.port;
const compiled = new Map();
port.on('message', (tests) => {
  for (const { id, source, flags, text } of tests) {
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
  }
});
`;

interface Pending {
  source: string;
  flags: string;
  text: string;
  limitMs: number;
  resolve: (matched: boolean) => void;
  reject: (error: Error) => void;
}

interface Reply {
  id: number;
  result?: boolean;
  error?: string;
}

interface Test {
  id: number;
  source: string;
  flags: string;
  text: string;
}

let worker: Worker | null = null;
let port: MessagePort | null = null;
let nextId = 0;
/** Every test sent and not answered, in the order sent: the worker runs them in that order. */
const pending = new Map<number, Pending>();
/** Whether the current worker has started (its 'online' event or an answer has come). */
let workerUp = false;
/**
 * performance.now() since which the first pending test has been running, as far as this thread
 * can tell (never earlier than it really started); Infinity while the worker is not yet up.
 */
let runningSince = Infinity;
/** Tests asked for this turn, sent together at its end. */
let queued: Array<[number, Pending]> = [];
let watchdog: ReturnType<typeof setTimeout> | null = null;
/** When the armed watchdog fires (performance.now()). */
let watchdogAt = Infinity;

function start(): MessagePort {
  const channel = new MessageChannel();
  worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { port: channel.port2 },
    transferList: [channel.port2],
    resourceLimits: { maxOldGenerationSizeMb: 64 },
  });
  worker.unref();
  const started = worker;
  // Its start-up is not the first test's running time.
  started.on('online', () => {
    if (worker !== started) return;
    workerUp = true;
    if (runningSince === Infinity && pending.size > 0) {
      runningSince = performance.now();
      armWatchdog();
    }
  });
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
  // The worker goes on to the next test as soon as it has answered this one.
  workerUp = true;
  if (pending.size > 0) {
    runningSince = performance.now();
    armWatchdog();
  }
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
  workerUp = false;
  runningSince = Infinity;
  const waiting = [...pending.entries()].filter(([id]) => id !== failed);
  pending.clear();
  for (const [, entry] of waiting) queue(entry);
}

function queue(entry: Pending): void {
  if (queued.length === 0) setImmediate(sendQueued);
  queued.push([++nextId, entry]);
}

function sendQueued(): void {
  const batch = queued;
  queued = [];
  if (batch.length === 0) return;
  // An idle worker starts on the batch as soon as it gets it; a busy one when it reaches it.
  if (pending.size === 0 && workerUp) runningSince = performance.now();
  const tests: Test[] = [];
  for (const [id, entry] of batch) {
    pending.set(id, entry);
    tests.push({ id, source: entry.source, flags: entry.flags, text: entry.text });
  }
  (port ?? start()).postMessage(tests);
  armWatchdog();
}

/** The first test not answered: the one the worker is running, or will run next. */
function running(): [number, Pending] | undefined {
  return pending.entries().next().value;
}

/**
 * The watchdog fires when the running test's limit is up; it is moved earlier when a test with a
 * shorter limit starts, later only when it fires (not per answer). The running test still
 * unanswered past its limit is the runaway, as if it had had a timer of its own.
 */
function armWatchdog(): void {
  const head = running();
  const at = head === undefined ? Infinity : runningSince + head[1].limitMs;
  if (at === Infinity || (watchdog !== null && watchdogAt <= at)) return;
  if (watchdog !== null) clearTimeout(watchdog);
  watchdogAt = at;
  watchdog = setTimeout(onWatchdog, Math.max(0, at - performance.now()));
  watchdog.unref();
}

function onWatchdog(): void {
  watchdog = null;
  watchdogAt = Infinity;
  // Answers already on their way (the event loop was busy, not the pattern) count.
  for (let reply = port && receiveMessageOnPort(port); reply; reply = port && receiveMessageOnPort(port))
    settle(reply.message as Reply);
  const head = running();
  if (head !== undefined && performance.now() >= runningSince + head[1].limitMs) {
    const [id, entry] = head;
    restart(id);
    entry.reject(new Error(`the pattern ran longer than ${entry.limitMs} ms on this text`));
    return;
  }
  armWatchdog();
}

/**
 * Work a pattern may do on the event loop instead of the worker: about a millisecond at worst
 * (irregexp takes a few nanoseconds a step), less than a round trip to the worker costs.
 */
export const EVENT_LOOP_STEPS = 200_000;

/** Escapes that stand for one character or one class of characters (no back-references, no assertions). */
const ONE_CHARACTER_ESCAPES = new Set('dDwWsStnrfv^$\\.*+?()[]{}|/-');
/** Outside a class these are syntax; everything else is a literal character. */
const SYNTAX = new Set('^$\\.*+?()[]{}|');
const COUNT = /^\{(\d{1,6})(?:(,)(\d{1,6})?)?\}/;

/**
 * The steps per start position a pattern can take when it has the one shape whose cost is known
 * without running it; null for any other pattern (those go to the worker).
 *
 * The shape: an optional `^`, then terms that each match one character (a literal, `.`, a class
 * `[…]` or a one-character escape), each with a fixed count, except that the last term may have
 * an open count (`*`, `+`, `?`, `{n,}`, `{n,m}`, greedy or lazy), then `$` only when every count
 * is fixed. No groups, alternation, back-references or look-arounds. A backtracking matcher then
 * has no choice to go back to at any start position before the last term, so a start fails
 * within F steps (F: the sum of the terms' least counts); one that gets through the last term's
 * least count has matched, since nothing follows it (its open part takes at most one pass over
 * the text, once). A test is thus at most (length + 1) × (F + 1) + length steps.
 */
export function eventLoopSteps(source: string): number | null {
  let at = source.startsWith('^') ? 1 : 0;
  let fixedSteps = 0;
  let open = false;
  while (at < source.length) {
    // Nothing may follow a term with an open count; `$` only ends a pattern without one.
    if (open) return null;
    const c = source[at]!;
    if (c === '$') return at === source.length - 1 ? fixedSteps + 1 : null;
    if (c === '\\') {
      const next = source[at + 1];
      if (next === undefined || !ONE_CHARACTER_ESCAPES.has(next)) return null;
      at += 2;
    } else if (c === '[') {
      at = classEnd(source, at + 1);
      if (at < 0) return null;
    } else if (c === '.' || !SYNTAX.has(c)) {
      at += 1;
    } else {
      return null;
    }
    let least = 1;
    const q = source[at];
    if (q === '*' || q === '+' || q === '?') {
      least = q === '+' ? 1 : 0;
      open = true;
      at += 1;
    } else if (q === '{') {
      const count = COUNT.exec(source.slice(at, at + 16));
      if (!count) return null;
      least = Number(count[1]);
      open = count[2] !== undefined && count[3] !== count[1];
      at += count[0].length;
    }
    if (open && source[at] === '?') at += 1; // lazy: the same single pass
    fixedSteps += least;
    if (fixedSteps > EVENT_LOOP_STEPS) return null;
  }
  return fixedSteps + 1;
}

/** The index after a class's `]`, or -1 when the class holds anything beyond characters, ranges and one-character escapes. */
function classEnd(source: string, from: number): number {
  let at = source[from] === '^' ? from + 1 : from;
  while (at < source.length) {
    const c = source[at]!;
    if (c === ']') return at + 1;
    if (c === '[') return -1;
    if (c === '\\') {
      const next = source[at + 1];
      if (next === undefined || !ONE_CHARACTER_ESCAPES.has(next)) return -1;
      at += 2;
    } else {
      at += 1;
    }
  }
  return -1;
}

/** Compiled patterns of the shape above, by source (null: not of the shape), at most MAX_SHAPES. */
const shapes = new Map<string, { pattern: RegExp; steps: number } | null>();
const MAX_SHAPES = 1_000;

/**
 * `new RegExp(source).test(text)` at once, when the pattern's shape bounds its work on this text
 * to EVENT_LOOP_STEPS; undefined when the test must go to the worker (`testWithin`).
 */
export function testAtOnce(source: string, text: string, flags = ''): boolean | undefined {
  if (flags !== '') return undefined;
  let shape = shapes.get(source);
  if (shape === undefined) {
    const steps = eventLoopSteps(source);
    shape = steps === null || regexProblem(source) !== null ? null : { pattern: new RegExp(source), steps };
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(source, shape);
  }
  if (shape === null || (text.length + 1) * shape.steps + text.length > EVENT_LOOP_STEPS) return undefined;
  return shape.pattern.test(text);
}

/** `new RegExp(source, flags).test(text)` on the worker; rejects when it runs past the limit. */
export function testWithin(source: string, text: string, limitMs = REGEX_TIME_LIMIT_MS, flags = ''): Promise<boolean> {
  return new Promise((resolve, reject) => {
    queue({ source, flags, text, limitMs, resolve, reject });
  });
}
