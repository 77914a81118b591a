/**
 * Patterns written by admins run on a worker thread with a time limit: a pattern that
 * backtracks catastrophically (`(a+)+$`) would otherwise block the event loop, which no check
 * time-out can interrupt. A runaway pattern costs the worker (it is terminated and replaced),
 * never the gateway. One warm worker serves every test; regex-worker.ts supervises it (batches,
 * the time limits, and a worker that fails on its own).
 */
import type { MessagePort, Worker } from 'node:worker_threads';
import { startEvalWorker } from '../lib/eval-worker.js';
import type { Logger } from '../telemetry/logger.js';
import { createRegexWorker, type RegexWorker, type RegexWorkerLog } from './regex-worker.js';

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

/** Starts the worker of WORKER_SOURCE, answering on `port`. */
function spawnRegexWorker(port: MessagePort): Worker {
  return startEvalWorker(WORKER_SOURCE, {
    workerData: { port },
    transferList: [port],
    resourceLimits: { maxOldGenerationSizeMb: 64 },
  });
}

/** Where worker failures are logged: the server's logger once it has started, else a process warning. */
let logger: Logger | null = null;

/** The logger for the regex worker's failures (the server's; the last one set, when a process runs several). */
export function setRegexWorkerLogger(next: Logger): void {
  logger = next;
}

const log: RegexWorkerLog = (level, fields, message) => {
  if (logger !== null) logger[level](fields, message);
  else process.emitWarning(`${message} ${JSON.stringify(fields)}`, { code: 'SVCGW_REGEX_WORKER' });
};

let regexWorker: RegexWorker | null = null;

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

/**
 * `new RegExp(source, flags).test(text)` on the worker; rejects when it runs past the limit, when
 * its worker fails while running it, or while tests are refused after failures in a row.
 */
export function testWithin(source: string, text: string, limitMs = REGEX_TIME_LIMIT_MS, flags = ''): Promise<boolean> {
  regexWorker ??= createRegexWorker({ spawn: spawnRegexWorker, log });
  return regexWorker.test(source, flags, text, limitMs);
}
