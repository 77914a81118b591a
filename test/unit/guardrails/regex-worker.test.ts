import { EventEmitter } from 'node:events';
import { Worker, type MessagePort } from 'node:worker_threads';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { defineCheck, fail, pass } from '../../../src/guardrails/define-check.js';
import {
  createRegexWorker,
  type RegexWorkerOptions,
  type RegexWorkerTimers,
} from '../../../src/guardrails/regex-worker.js';
import { runChecks } from '../../../src/guardrails/run-checks.js';
import { currentText } from '../../../src/guardrails/text/context-text.js';
import { GUARDRAIL_HOOKS } from '../../../src/guardrails/types.js';
import { createManualClock } from '../../../src/lib/clock.js';
import { chatContext } from './context.js';

/**
 * The production worker's protocol, with texts that kill it: `exit…` ends the thread (as an
 * unexpected exit), `oom…` allocates past its heap limit (as a huge input could).
 */
const CRASHING_WORKER = `
const { workerData } = require('node:worker_threads');
const port = workerData.port;
port.on('message', (tests) => {
  for (const { id, source, flags, text } of tests) {
    if (text.startsWith('exit')) process.exit(7);
    if (text.startsWith('oom')) { const held = []; for (;;) held.push(new Array(1e5).fill(Math.random())); }
    port.postMessage({ id, result: new RegExp(source, flags).test(text) });
  }
});
`;

function spawnCrashing(port: MessagePort): Worker {
  return new Worker(CRASHING_WORKER, {
    eval: true,
    workerData: { port },
    transferList: [port],
    resourceLimits: { maxOldGenerationSizeMb: 16 },
  });
}

/** A worker that never comes online (nor answers, nor ends). */
function spawnNeverOnline(): Worker {
  return Object.assign(new EventEmitter(), { unref: () => undefined, terminate: () => Promise.resolve(1) }) as never;
}

/** Time that moves only when told, and timers that fire only when told. */
function manualTimers() {
  const clock = createManualClock(0);
  const armed = new Map<number, { callback: () => void; at: number }>();
  let next = 0;
  const timers: RegexWorkerTimers = {
    now: clock.now,
    setTimeout(callback, ms) {
      armed.set(++next, { callback, at: clock.now() + ms });
      return next;
    },
    clearTimeout(handle) {
      armed.delete(handle as number);
    },
  };
  /** Moves time on by `ms` and fires every timer due by then. */
  const advance = (ms: number) => {
    clock.advance(ms);
    for (const [handle, { callback, at }] of [...armed])
      if (at <= clock.now()) {
        armed.delete(handle);
        callback();
      }
  };
  return { timers, advance };
}

interface Logged {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

/** A supervised worker made by `spawn`, counting the workers started and recording what it logs. */
function supervised(spawn: (port: MessagePort) => Worker, options: Partial<RegexWorkerOptions> = {}) {
  const logged: Logged[] = [];
  let started = 0;
  const worker = createRegexWorker({
    spawn: (port) => {
      started += 1;
      return spawn(port);
    },
    log: (level, fields, message) => logged.push({ level, fields, message }),
    ...options,
  });
  onTestFinished(() => worker.stop());
  return { worker, logged, started: () => started };
}

const outcomes = (promises: Array<Promise<boolean>>) =>
  Promise.allSettled(promises).then((settled) =>
    settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
  );

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('a worker that dies while running a test', () => {
  it('settles that test with an error, never runs it again, and sends the others to a new worker', async () => {
    const { worker, logged, started } = supervised(spawnCrashing);
    const results = await outcomes([
      worker.test('^a', '', 'abc', 2_000),
      worker.test('SECRET-PATTERN', '', 'exit SECRET-TEXT', 2_000),
      worker.test('b', '', 'abc', 2_000),
      worker.test('^x', '', 'abc', 2_000),
    ]);
    expect(results).toEqual([
      true,
      'the regex worker exited (code 7) while running this pattern on this text',
      true,
      false,
    ]);
    expect(started()).toBe(2);
    // Logged once, with lengths and ids: neither the pattern nor the text.
    expect(logged).toEqual([
      {
        level: 'warn',
        fields: {
          worker: 1,
          failure: 'exit',
          exit_code: 7,
          running_test: { id: 2, pattern_length: 14, text_length: 16 },
          waiting_tests: 2,
          failures_in_a_row: 1,
        },
        message: expect.stringMatching(/exited \(code 7\) while running a test/),
      },
    ]);
    expect(JSON.stringify(logged)).not.toMatch(/SECRET/);
    // The new worker serves later tests.
    expect(await worker.test('c$', '', 'abc', 2_000)).toBe(true);
  });

  it('out of memory on an input: that check gets an error, the next ones their answers (no crash loop)', async () => {
    const { worker, logged, started } = supervised(spawnCrashing);
    const results = await outcomes([worker.test('a', '', 'oom', 5_000), worker.test('b', '', 'abc', 5_000)]);
    expect(results).toEqual(['the regex worker ran out of memory while running this pattern on this text', true]);
    expect(started()).toBe(2);
    expect(logged.map((l) => [l.level, l.fields.failure, l.fields.code])).toEqual([
      ['warn', 'error', 'ERR_WORKER_OUT_OF_MEMORY'],
    ]);
  });

  it('a regexMatch-like check whose worker dies gives an error result that follows failOnError', async () => {
    const { worker } = supervised(spawnCrashing);
    for (const failOnError of [true, false]) {
      const check = defineCheck({
        id: 'default.regexMatch',
        hooks: GUARDRAIL_HOOKS,
        parameters: z.strictObject({ rule: z.string() }),
        failOnError: () => failOnError,
        run: (context, p) =>
          worker.test(p.rule, '', currentText(context), 2_000).then((matched) => (matched ? pass('m') : fail('n'))),
      });
      const outcome = await runChecks(
        [{ id: 'default.regexMatch', parameters: { rule: 'x' } }],
        chatContext('exit now'),
        { catalogue: { 'default.regexMatch': check } },
      );
      expect(outcome.results.map((r) => [r.verdict, r.error])).toEqual([
        [!failOnError, 'the regex worker exited (code 7) while running this pattern on this text'],
      ]);
    }
  });
});

describe('workers failing in a row', () => {
  it('after maxFailures in a row, waiting tests are rejected and new ones refused until the cool-down ends', async () => {
    const { timers, advance } = manualTimers();
    const { worker, logged, started } = supervised(spawnCrashing, { timers, maxFailures: 3, coolDownMs: 10_000 });
    const results = await outcomes(
      ['exit 1', 'exit 2', 'exit 3', 'exit 4', 'exit 5'].map((text) => worker.test('a', '', text, 2_000)),
    );
    const crashed = 'the regex worker exited (code 7) while running this pattern on this text';
    const refused = 'the regex worker failed 3 times in a row; regular expressions are not run for up to 10000 ms';
    expect(results).toEqual([crashed, crashed, crashed, refused, refused]);
    expect(started()).toBe(3);
    expect(logged.map((l) => [l.level, l.fields.failures_in_a_row])).toEqual([
      ['warn', 1],
      ['warn', 2],
      ['warn', 3],
      ['error', 3],
    ]);
    expect(logged[3]!.fields).toEqual({ failures_in_a_row: 3, cool_down_ms: 10_000, rejected_tests: 2 });

    // Refused at once: no worker started.
    await expect(worker.test('a', '', 'abc', 2_000)).rejects.toThrow(refused);
    advance(9_999);
    await expect(worker.test('a', '', 'abc', 2_000)).rejects.toThrow(refused);
    expect(started()).toBe(3);

    // After the cool-down a new worker is tried: one more failure without an answer refuses again…
    advance(1);
    expect(await outcomes([worker.test('a', '', 'exit', 2_000)])).toEqual([crashed]);
    await expect(worker.test('a', '', 'abc', 2_000)).rejects.toThrow(/failed 4 times in a row/);
    // …and an answer ends the run of failures.
    advance(10_000);
    expect(await worker.test('a', '', 'abc', 2_000)).toBe(true);
    expect(await outcomes([worker.test('a', '', 'exit', 2_000), worker.test('b', '', 'abc', 2_000)])).toEqual([
      crashed,
      true,
    ]);
    expect(started()).toBe(6);
  });

  it('an answer between two failures starts the count again', async () => {
    const { worker, logged } = supervised(spawnCrashing, { maxFailures: 2 });
    const results = await outcomes(['exit', 'ok', 'exit', 'ok'].map((text) => worker.test('o', '', text, 2_000)));
    const crashed = 'the regex worker exited (code 7) while running this pattern on this text';
    expect(results).toEqual([crashed, true, crashed, true]);
    expect(logged.map((l) => [l.level, l.fields.failures_in_a_row])).toEqual([
      ['warn', 1],
      ['warn', 1],
    ]);
  });
});

describe('a worker that does not start', () => {
  it('never online: replaced after the start limit, without blaming a test; then refused, and nothing is left pending', async () => {
    const { timers, advance } = manualTimers();
    const { worker, logged, started } = supervised(spawnNeverOnline, {
      timers,
      startLimitMs: 10_000,
      maxFailures: 3,
    });
    let settled: string | null = null;
    const test = worker.test('SECRET', '', 'SECRET TEXT', 1_000).then(
      (matched) => (settled = String(matched)),
      (error: Error) => (settled = error.message),
    );
    for (let attempt = 1; attempt <= 3; attempt++) {
      await flush(); // the test is sent (a worker started) at the end of the turn
      expect(started()).toBe(attempt);
      // The test's own limit counts only once the worker runs it.
      advance(9_999);
      expect(settled).toBeNull();
      advance(1);
    }
    await test;
    expect(settled).toBe(
      'the regex worker failed 3 times in a row; regular expressions are not run for up to 10000 ms',
    );
    expect(logged.map((l) => [l.level, l.fields.failure, l.fields.running_test])).toEqual([
      ['warn', 'start', null],
      ['warn', 'start', null],
      ['warn', 'start', null],
      ['error', undefined, undefined],
    ]);
    expect(logged[0]!.message).toBe('the regex worker did not start in time; waiting tests go to a new worker');
    expect(JSON.stringify(logged)).not.toMatch(/SECRET/);
  });

  it('dies before answering anything, on every start: every test settles within maxFailures workers', async () => {
    const { worker, started } = supervised(
      (port) => new Worker('this is not JavaScript (', { eval: true, workerData: { port }, transferList: [port] }),
      { maxFailures: 3 },
    );
    const results = await outcomes([1, 2, 3, 4, 5].map((n) => worker.test('a', '', `text ${n}`, 1_000)));
    expect(results).toHaveLength(5);
    for (const result of results) expect(result).toMatch(/^the regex worker failed/);
    expect(results.slice(3)).toEqual([
      'the regex worker failed 3 times in a row; regular expressions are not run for up to 10000 ms',
      'the regex worker failed 3 times in a row; regular expressions are not run for up to 10000 ms',
    ]);
    expect(started()).toBe(3);
  });

  it('a factory that throws counts as a failure too', async () => {
    const { worker, logged } = supervised(
      () => {
        throw Object.assign(new Error('no threads left'), { code: 'ERR_WORKER_INIT_FAILED' });
      },
      { maxFailures: 2 },
    );
    expect(await outcomes([worker.test('a', '', 'abc', 1_000)])).toEqual([
      'the regex worker failed 2 times in a row; regular expressions are not run for up to 10000 ms',
    ]);
    expect(logged.map((l) => [l.level, l.fields.failure, l.fields.code])).toEqual([
      ['warn', 'spawn', 'ERR_WORKER_INIT_FAILED'],
      ['warn', 'spawn', 'ERR_WORKER_INIT_FAILED'],
      ['error', undefined, undefined],
    ]);
  });
});
