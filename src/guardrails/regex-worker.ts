/**
 * The supervision of the worker thread that runs admins' regular expressions (safe-regex.ts
 * has the worker's code and what asks it for tests). One warm worker serves every test.
 *
 * The tests asked for in one turn of the event loop (the regex checks of every request that
 * turn) go to the worker in one message, and one watchdog timer guards them all: under load a
 * message and a timer per test cost more than the tests. The worker still answers each test as
 * soon as it has run it, in the order sent: the first test not answered is the one running, and
 * its time limit counts from the answer before it (or from when it reached an idle worker). Only
 * that test is blamed when time is up; the tests queued behind it are sent to the new worker.
 *
 * A worker can also fail on its own: it ends (an 'error' event, such as running out of memory,
 * or an 'exit' nobody asked for), or it does not start within `startLimitMs`. Then the test it
 * was running, if it had started, is rejected and not run again (it may be what killed the
 * worker: sending it again would kill the next one), and the others are sent to a new worker.
 * After `maxFailures` failures in a row (no answer between them) every waiting test is rejected
 * and new ones are refused at once for `coolDownMs`; after that one more failure without an
 * answer refuses again. Every promise thus settles: by an answer, the time limit, the failure of
 * its worker, or the refusal. Each failure is logged once, with ids and lengths, never a pattern
 * or a text (either may be a secret).
 */
import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';

/** A worker that has not come online within this is replaced (counted as a failure). */
export const WORKER_START_LIMIT_MS = 10_000;
/** Worker failures in a row (no answer between them) after which tests are refused for a while. */
export const WORKER_MAX_FAILURES = 3;
/** How long tests are refused after `WORKER_MAX_FAILURES` failures in a row. */
export const WORKER_COOL_DOWN_MS = 10_000;

/** Time and timers of the supervision, injectable so that tests decide when time is up. */
export interface RegexWorkerTimers {
  /** Milliseconds, monotonic. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** performance.now() and unref'd timers: the worker never keeps the process alive. */
export const systemRegexWorkerTimers: RegexWorkerTimers = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Where failures are reported: pino's `logger.warn(fields, message)` shape. */
export type RegexWorkerLog = (level: 'warn' | 'error', fields: Record<string, unknown>, message: string) => void;

export interface RegexWorkerOptions {
  /**
   * Starts a worker that answers tests on `port`: it gets arrays of {id, source, flags, text}
   * and answers each, in order, with {id, result} or {id, error}.
   */
  spawn: (port: MessagePort) => Worker;
  timers?: RegexWorkerTimers;
  startLimitMs?: number;
  maxFailures?: number;
  coolDownMs?: number;
  log?: RegexWorkerLog;
}

export interface RegexWorker {
  /** `new RegExp(source, flags).test(text)` on the worker; rejects past `limitMs` of running, or when the worker fails. */
  test(source: string, flags: string, text: string, limitMs: number): Promise<boolean>;
  /** Ends the worker and rejects every test still waiting (for tests). */
  stop(): Promise<void>;
}

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

/** One worker thread, from its start to its end. */
interface Incarnation {
  /** Counts the workers started, for the log. */
  serial: number;
  worker: Worker | null;
  port: MessagePort;
  /** Whether it has started (its 'online' event or an answer has come). */
  up: boolean;
  startTimer: unknown;
}

/** Why a worker ended, as the log and the blamed test's error say it (no pattern, no text). */
interface Failure {
  kind: 'spawn' | 'error' | 'exit' | 'start';
  code?: string | undefined;
  exitCode?: number | undefined;
}

export function createRegexWorker(options: RegexWorkerOptions): RegexWorker {
  const timers = options.timers ?? systemRegexWorkerTimers;
  const startLimitMs = options.startLimitMs ?? WORKER_START_LIMIT_MS;
  const maxFailures = options.maxFailures ?? WORKER_MAX_FAILURES;
  const coolDownMs = options.coolDownMs ?? WORKER_COOL_DOWN_MS;
  const log = options.log ?? (() => undefined);

  let current: Incarnation | null = null;
  let serial = 0;
  let nextId = 0;
  /** Every test sent and not answered, in the order sent: the worker runs them in that order. */
  const pending = new Map<number, Pending>();
  /**
   * timers.now() since which the first pending test has been running, as far as this thread
   * can tell (never earlier than it really started); Infinity while the worker is not yet up.
   */
  let runningSince = Infinity;
  /** Tests asked for this turn, sent together at its end. */
  let queued: Array<[number, Pending]> = [];
  let watchdog: unknown = null;
  /** When the armed watchdog fires (timers.now()). */
  let watchdogAt = Infinity;
  /** Workers that failed since the last answer. */
  let failures = 0;
  /** Until when (timers.now()) new tests are refused; -Infinity when they are not. */
  let refusedUntil = -Infinity;

  function start(): Incarnation | null {
    const channel = new MessageChannel();
    const incarnation: Incarnation = {
      serial: ++serial,
      worker: null,
      port: channel.port1,
      up: false,
      startTimer: null,
    };
    current = incarnation;
    try {
      incarnation.worker = options.spawn(channel.port2);
    } catch (error) {
      channel.port2.close();
      failed(incarnation, { kind: 'spawn', code: errorCode(error) });
      return null;
    }
    const worker = incarnation.worker;
    worker.unref();
    // Its start-up is not the first test's running time.
    worker.on('online', () => {
      if (current === incarnation) up(incarnation);
    });
    worker.on('error', (error: unknown) => failed(incarnation, { kind: 'error', code: errorCode(error) }));
    worker.on('exit', (exitCode: number) => failed(incarnation, { kind: 'exit', exitCode }));
    incarnation.startTimer = timers.setTimeout(() => {
      if (!incarnation.up) failed(incarnation, { kind: 'start' });
    }, startLimitMs);
    incarnation.port.on('message', settle);
    incarnation.port.unref();
    return incarnation;
  }

  function up(incarnation: Incarnation): void {
    if (incarnation.up) return;
    incarnation.up = true;
    timers.clearTimeout(incarnation.startTimer);
    if (runningSince === Infinity && pending.size > 0) {
      runningSince = timers.now();
      armWatchdog();
    }
  }

  function settle(reply: Reply): void {
    const entry = pending.get(reply.id);
    if (!entry) return;
    pending.delete(reply.id);
    // An answer: the worker works.
    failures = 0;
    if (current !== null && !current.up) {
      current.up = true;
      timers.clearTimeout(current.startTimer);
    }
    // The worker goes on to the next test as soon as it has answered this one.
    if (pending.size > 0) {
      runningSince = timers.now();
      armWatchdog();
    }
    if (reply.error !== undefined) entry.reject(new Error(reply.error));
    else entry.resolve(reply.result === true);
  }

  /** Answers already on their way (the event loop was busy, not the worker) count. */
  function drain(port: MessagePort): void {
    for (let reply = receiveMessageOnPort(port); reply; reply = receiveMessageOnPort(port))
      settle(reply.message as Reply);
  }

  /** Ends the current worker; the next test sent starts a new one. */
  function retire(incarnation: Incarnation): void {
    current = null;
    timers.clearTimeout(incarnation.startTimer);
    incarnation.port.close();
    incarnation.worker?.terminate().catch(() => undefined);
    runningSince = Infinity;
    if (watchdog !== null) timers.clearTimeout(watchdog);
    watchdog = null;
    watchdogAt = Infinity;
  }

  /** Sends the tests still waiting to the next worker, ahead of those asked for since. */
  function resend(): void {
    const waiting = [...pending.values()];
    pending.clear();
    if (waiting.length === 0) return;
    if (queued.length === 0) setImmediate(sendQueued);
    queued = [...waiting.map((entry): [number, Pending] => [++nextId, entry]), ...queued];
  }

  /** The worker ended or did not start: blame the test it was running, if any; once per worker. */
  function failed(incarnation: Incarnation, failure: Failure): void {
    if (current !== incarnation) return;
    drain(incarnation.port);
    const head = incarnation.up ? running() : undefined;
    if (head !== undefined) pending.delete(head[0]);
    retire(incarnation);
    failures += 1;
    log(
      'warn',
      {
        worker: incarnation.serial,
        failure: failure.kind,
        ...(failure.code !== undefined ? { code: failure.code } : {}),
        ...(failure.exitCode !== undefined ? { exit_code: failure.exitCode } : {}),
        running_test:
          head === undefined
            ? null
            : { id: head[0], pattern_length: head[1].source.length, text_length: head[1].text.length },
        waiting_tests: pending.size + queued.length,
        failures_in_a_row: failures,
      },
      head === undefined
        ? `the regex worker ${describeFailure(failure)}; waiting tests go to a new worker`
        : `the regex worker ${describeFailure(failure)} while running a test; that test gets an error, the others go to a new worker`,
    );
    head?.[1].reject(new Error(`the regex worker ${describeFailure(failure)} while running this pattern on this text`));
    if (failures >= maxFailures) refuse();
    else resend();
  }

  /** Rejects every test waiting, and refuses new ones until the cool-down is over. */
  function refuse(): void {
    refusedUntil = timers.now() + coolDownMs;
    const waiting = [...pending.values(), ...queued.map(([, entry]) => entry)];
    pending.clear();
    queued = [];
    log(
      'error',
      { failures_in_a_row: failures, cool_down_ms: coolDownMs, rejected_tests: waiting.length },
      `the regex worker failed ${failures} times in a row: regular expressions are refused for ${coolDownMs} ms`,
    );
    const error = refusal();
    for (const entry of waiting) entry.reject(error);
  }

  const refusal = () =>
    new Error(
      `the regex worker failed ${failures} times in a row; regular expressions are not run for up to ${coolDownMs} ms`,
    );

  function queue(entry: Pending): void {
    if (queued.length === 0) setImmediate(sendQueued);
    queued.push([++nextId, entry]);
  }

  function sendQueued(): void {
    const batch = queued;
    queued = [];
    if (batch.length === 0) return;
    // An idle worker starts on the batch as soon as it gets it; a busy one when it reaches it.
    if (pending.size === 0 && current?.up === true) runningSince = timers.now();
    const tests: Test[] = [];
    for (const [id, entry] of batch) {
      pending.set(id, entry);
      tests.push({ id, source: entry.source, flags: entry.flags, text: entry.text });
    }
    const target = current ?? start();
    // A worker that could not even be made has been dealt with (the tests resent, or refused).
    if (target === null) return;
    target.port.postMessage(tests);
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
    if (watchdog !== null) timers.clearTimeout(watchdog);
    watchdogAt = at;
    watchdog = timers.setTimeout(onWatchdog, Math.max(0, at - timers.now()));
  }

  function onWatchdog(): void {
    watchdog = null;
    watchdogAt = Infinity;
    if (current !== null) drain(current.port);
    const head = running();
    if (current !== null && head !== undefined && timers.now() >= runningSince + head[1].limitMs) {
      // A runaway pattern: the worker did its job (stopping it is the plan), not a failure.
      const [id, entry] = head;
      pending.delete(id);
      retire(current);
      resend();
      entry.reject(new Error(`the pattern ran longer than ${entry.limitMs} ms on this text`));
      return;
    }
    armWatchdog();
  }

  return {
    test(source, flags, text, limitMs) {
      if (refusedUntil !== -Infinity) {
        // Refusing (the clock is read only then, not per test).
        if (timers.now() < refusedUntil) return Promise.reject(refusal());
        refusedUntil = -Infinity;
      }
      return new Promise((resolve, reject) => {
        queue({ source, flags, text, limitMs, resolve, reject });
      });
    },
    async stop() {
      const incarnation = current;
      const waiting = [...pending.values(), ...queued.map(([, entry]) => entry)];
      pending.clear();
      queued = [];
      if (incarnation !== null) {
        retire(incarnation);
        await incarnation.worker?.terminate();
      }
      for (const entry of waiting) entry.reject(new Error('the regex worker was stopped'));
    },
  };
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, name } = error as { code?: unknown; name?: unknown };
  return typeof code === 'string' ? code : typeof name === 'string' ? name : undefined;
}

function describeFailure(failure: Failure): string {
  switch (failure.kind) {
    case 'spawn':
      return `could not be started (${failure.code ?? 'unknown error'})`;
    case 'start':
      return 'did not start in time';
    case 'exit':
      return `exited (code ${failure.exitCode})`;
    case 'error':
      return failure.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? 'ran out of memory'
        : `failed (${failure.code ?? 'unknown error'})`;
  }
}
