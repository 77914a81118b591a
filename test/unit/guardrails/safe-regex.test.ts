import { MessagePort } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import { runChecks } from '../../../src/guardrails/run-checks.js';
import { EVENT_LOOP_STEPS, eventLoopSteps, testAtOnce, testWithin } from '../../../src/guardrails/safe-regex.js';
import { chatContext } from './context.js';

describe('patterns on the worker', () => {
  it('answers like RegExp.test, with flags', async () => {
    expect(await testWithin('^pa', 'paris')).toBe(true);
    expect(await testWithin('^PA', 'paris')).toBe(false);
    expect(await testWithin('^PA', 'paris', 100, 'i')).toBe(true);
  });

  it('stops a runaway pattern, and the tests waiting behind it still get their answers', async () => {
    const runaway = testWithin('^(a+)+$', `${'a'.repeat(40)}!`, 100);
    const behind = [testWithin('b', 'abc', 2_000), testWithin('z', 'abc', 2_000)];
    await expect(runaway).rejects.toThrow(/ran longer than 100 ms/);
    expect(await Promise.all(behind)).toEqual([true, false]);
    // The replaced worker serves the next test.
    expect(await testWithin('c$', 'abc')).toBe(true);
  });

  it('answers each of the tests asked for in one turn (one message to the worker) with its own verdict', async () => {
    const asked = [
      testWithin('sk-[A-Za-z0-9]{20,}', 'my key is sk-abcdefghijklmnopqrstuvwxyz'),
      testWithin('sk-[A-Za-z0-9]{20,}', 'hello'),
      testWithin('^h', 'hello'),
      testWithin('^H', 'hello'),
      testWithin('^H', 'hello', 1_000, 'i'),
      testWithin('(', 'hello'),
    ];
    const settled = await Promise.allSettled(asked);
    expect(settled.slice(0, 5).map((s) => (s.status === 'fulfilled' ? s.value : s.reason))).toEqual([
      true,
      false,
      true,
      false,
      true,
    ]);
    expect(settled[5]).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/Invalid/) } });
  });

  it('stops a runaway pattern sent in the same turn as harmless ones, which keep their own answers', async () => {
    const before = testWithin('a', 'abc', 2_000);
    const runaway = testWithin('^(a+)+$', `${'a'.repeat(40)}!`, 100);
    const after = testWithin('^x', 'abc', 2_000);
    await expect(runaway).rejects.toThrow(/ran longer than 100 ms/);
    expect(await Promise.all([before, after])).toEqual([true, false]);
  });

  it('stops only the running test: a harmless one sent later, queued behind a runaway, gets its own answer', async () => {
    // The runaway's limit is longer than the harmless one's: counted from when they were sent,
    // the harmless test would run out of time first while merely waiting behind the runaway.
    const runaway = testWithin('^(a+)+$', `${'a'.repeat(40)}!`, 2_000);
    await new Promise((resolve) => setTimeout(resolve, 50)); // a later turn; the worker is busy with the runaway
    const later = Promise.allSettled([testWithin('b', 'abc', 1_000), testWithin('^x', 'abc', 1_000)]);
    await expect(runaway).rejects.toThrow(/ran longer than 2000 ms/);
    expect((await later).map((s) => (s.status === 'fulfilled' ? s.value : String(s.reason)))).toEqual([true, false]);
  });

  it('stops a runaway queued behind another one on the next worker, at its own limit', async () => {
    const first = testWithin('^(a+)+$', `${'a'.repeat(40)}!`, 100);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = testWithin('^(b+)+$', `${'b'.repeat(40)}!`, 150);
    const harmless = testWithin('c', 'abc', 2_000);
    await expect(first).rejects.toThrow(/ran longer than 100 ms/);
    await expect(second).rejects.toThrow(/ran longer than 150 ms/);
    expect(await harmless).toBe(true);
  });

  it('keeps the event loop free while a runaway pattern runs', async () => {
    const order: string[] = [];
    const runaway = testWithin('^(a+)+$', `${'a'.repeat(40)}!`, 200).catch(() => order.push('runaway stopped'));
    // Other work of the gateway (here: a few turns of the loop) goes on meanwhile.
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    order.push('loop turned');
    await runaway;
    expect(order).toEqual(['loop turned', 'runaway stopped']);
  });

  it('reports a pattern that does not compile as an error, not as a verdict', async () => {
    await expect(testWithin('(', 'abc')).rejects.toThrow(/Invalid regular expression/);
  });
});

describe('regexMatch checks of one guardrail', () => {
  it('share one message to the worker, each with its own verdict', async () => {
    const chat = chatContext('hello there, order 42');
    await runChecks([{ id: 'default.regexMatch', parameters: { rule: '(warm)-up' } }], chat); // the worker is up
    const posted = vi.spyOn(MessagePort.prototype, 'postMessage');
    try {
      // Groups and alternation are for the worker; so is an open count followed by more pattern.
      const outcome = await runChecks(
        [
          { id: 'default.regexMatch', parameters: { rule: '^(hello)' } },
          { id: 'default.regexMatch', parameters: { rule: 'order \\d+$' } },
          { id: 'default.regexMatch', parameters: { rule: 'sk-[A-Za-z0-9]{20,}|key', not: true } },
          { id: 'default.regexMatch', parameters: { rule: '^(bye)' } },
        ],
        chat,
      );
      expect(outcome.results.map((r) => r.verdict)).toEqual([true, true, true, false]);
      expect(posted).toHaveBeenCalledTimes(1);
    } finally {
      posted.mockRestore();
    }
  });

  it('start ahead only up to a check that may change the body', async () => {
    const outcome = await runChecks(
      [
        { id: 'default.regexMatch', parameters: { rule: 'ada@example\\.com' } },
        { id: 'default.pii', parameters: { categories: ['EMAIL_ADDRESS'], redact: true } },
        { id: 'default.regexMatch', parameters: { rule: 'ada@example\\.com' } },
      ],
      chatContext('mail ada@example.com'),
    );
    expect(outcome.results.map((r) => [r.id, r.verdict, r.transformed])).toEqual([
      ['default.regexMatch', true, false],
      ['default.pii', true, true],
      ['default.regexMatch', false, false],
    ]);
  });
});

describe('patterns whose work is bounded, on the event loop', () => {
  it('knows the shape: one-character terms with fixed counts, an open count only on the last', () => {
    expect(eventLoopSteps('sk-[A-Za-z0-9]{20,}')).toBe(24);
    expect(eventLoopSteps('^hello')).toBe(6);
    expect(eventLoopSteps('\\d{3}-\\d{4}$')).toBe(9);
    expect(eventLoopSteps('[^\\]x]*')).toBe(1);
    expect(eventLoopSteps('ab+?')).toBe(3);
    for (const other of [
      '^(a+)+$', // groups
      'a|b', // alternation
      'a+b', // an open count with more after it: backtracking
      'a*$',
      'a.*b.*c',
      '(?=a)b', // look-around
      '(a)\\1', // back-reference
      '\\bword', // assertions
      '[[:alpha:]]',
      'a{2,}{3}',
      'a{,3}',
      'colou?r',
      'x{300000}', // more fixed steps than allowed
      '\\u0041',
    ])
      expect(eventLoopSteps(other), other).toBeNull();
  });

  it('answers as RegExp.test does, at once', () => {
    const cases: Array<[string, string]> = [
      ['sk-[A-Za-z0-9]{20,}', 'my key is sk-abcdefghijklmnopqrstuvwxyz'],
      ['sk-[A-Za-z0-9]{20,}', 'sk-short sk-'],
      ['^hello', 'hello there'],
      ['^hello', 'oh hello'],
      ['\\d{3}-\\d{4}$', 'call 555-1234'],
      ['\\d{3}-\\d{4}$', 'call 555-1234 now'],
      ['a.c', 'a\nc'],
      ['[^\\]x]*', ''],
      ['colou?', 'the colo'],
    ];
    for (const [source, text] of cases) expect(testAtOnce(source, text), source).toBe(new RegExp(source).test(text));
  });

  it('leaves to the worker other patterns, flags, and texts too long for the bound', async () => {
    expect(testAtOnce('^(a+)+$', 'aaa!')).toBeUndefined();
    expect(testAtOnce('^pa', 'paris', 'i')).toBeUndefined();
    const long = 'a'.repeat(Math.ceil(EVENT_LOOP_STEPS / 24));
    expect(testAtOnce('sk-[A-Za-z0-9]{20,}', long)).toBeUndefined();
    expect(testAtOnce('sk-[A-Za-z0-9]{20,}', long.slice(0, 1000))).toBe(false);
    // The check still answers for a long text, from the worker.
    const posted = vi.spyOn(MessagePort.prototype, 'postMessage');
    try {
      const outcome = await runChecks(
        [{ id: 'default.regexMatch', parameters: { rule: 'sk-[A-Za-z0-9]{20,}', not: true } }],
        chatContext(`${long} sk-abcdefghijklmnopqrstuvwxyz`),
      );
      expect(outcome.results.map((r) => [r.verdict, r.explanation])).toEqual([
        [false, 'The text matches the pattern. (inverted by not)'],
      ]);
      expect(posted).toHaveBeenCalledTimes(1);
    } finally {
      posted.mockRestore();
    }
  });

  it('a regexMatch check with such a pattern sends nothing to the worker and gives the same result', async () => {
    const posted = vi.spyOn(MessagePort.prototype, 'postMessage');
    try {
      const outcome = await runChecks(
        [
          { id: 'default.regexMatch', parameters: { rule: 'sk-[A-Za-z0-9]{20,}', not: true } },
          { id: 'default.regexMatch', parameters: { rule: '^hello' } },
        ],
        chatContext('hello there'),
      );
      expect(outcome.results.map((r) => [r.verdict, r.explanation, r.data, r.error])).toEqual([
        [
          true,
          'The text does not match the pattern. (inverted by not)',
          { rule: 'sk-[A-Za-z0-9]{20,}', not: true },
          undefined,
        ],
        [true, 'The text matches the pattern.', { rule: '^hello', not: false }, undefined],
      ]);
      expect(posted).not.toHaveBeenCalled();
    } finally {
      posted.mockRestore();
    }
  });
});
