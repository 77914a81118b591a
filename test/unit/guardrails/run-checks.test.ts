import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createManualClock } from '../../../src/lib/clock.js';
import { defineCheck } from '../../../src/guardrails/define-check.js';
import type { Timers } from '../../../src/guardrails/check-settle.js';
import { runChecks } from '../../../src/guardrails/run-checks.js';
import type { CheckDefinition, GuardrailContext } from '../../../src/guardrails/types.js';
import { chatContext } from './context.js';

/** Timers that fire only when the test says so. */
function manualTimers() {
  const pending = new Map<number, { callback: () => void; ms: number }>();
  let next = 0;
  const timers: Timers = {
    setTimeout(callback, ms) {
      pending.set(++next, { callback, ms });
      return next;
    },
    clearTimeout(handle) {
      pending.delete(handle as number);
    },
  };
  return {
    timers,
    pending,
    fire: () => {
      for (const [id, { callback }] of [...pending]) {
        pending.delete(id);
        callback();
      }
    },
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A check that never answers and records whether it was told to stop. */
function hangingCheck(failOnError: boolean) {
  const seen: { signal?: AbortSignal } = {};
  const check: CheckDefinition = defineCheck({
    id: 'default.webhook',
    hooks: ['beforeRequestHook'],
    parameters: z.strictObject({}),
    timeoutMs: () => 250,
    failOnError: () => failOnError,
    run: (context) => {
      seen.signal = context.signal;
      return new Promise(() => {});
    },
  });
  return { check, seen };
}

const userText = (outcome: { request: unknown }) =>
  (outcome.request as { messages: { content: string }[] }).messages.at(-1)!.content;

describe('runChecks', () => {
  it('times a hanging check out at its own limit, tells it to stop, and follows failOnError', async () => {
    for (const failOnError of [true, false]) {
      const { timers, pending, fire } = manualTimers();
      const { check, seen } = hangingCheck(failOnError);
      const running = runChecks([{ id: 'hang' }], chatContext('hi'), { timers, catalogue: { hang: check } });
      await flush();
      expect([...pending.values()].map((t) => t.ms)).toEqual([250]);
      fire();
      const outcome = await running;
      expect(outcome.results[0]).toMatchObject({
        timedOut: true,
        verdict: !failOnError,
        error: 'timed out after 250 ms',
      });
      expect(outcome.verdict).toBe(!failOnError);
      expect(seen.signal?.aborted).toBe(true);
    }
  });

  it('caps every limit at maxTimeoutMs', async () => {
    const { timers, pending, fire } = manualTimers();
    const { check } = hangingCheck(true);
    const running = runChecks([{ id: 'hang' }], chatContext('hi'), {
      timers,
      catalogue: { hang: check },
      maxTimeoutMs: 40,
    });
    await flush();
    expect([...pending.values()].map((t) => t.ms)).toEqual([40]);
    fire();
    expect((await running).results[0]?.error).toBe('timed out after 40 ms');
  });

  it('turns a throwing check into an error result, and reports time from the clock given', async () => {
    const clock = createManualClock();
    const thrower = defineCheck({
      id: 'default.regexMatch',
      hooks: ['beforeRequestHook'],
      parameters: z.strictObject({}),
      run: () => {
        clock.advance(12);
        throw new Error('boom');
      },
    });
    const outcome = await runChecks([{ id: 't', name: 'my check' }], chatContext('hi'), {
      clock,
      catalogue: { t: thrower },
    });
    expect(outcome.results[0]).toMatchObject({ name: 'my check', verdict: false, error: 'boom', durationMs: 12 });
  });

  it('hands each check the body the checks before it rewrote, and says it changed', async () => {
    const outcome = await runChecks(
      [
        { id: 'default.addPrefix', parameters: { prefix: 'Mail ' } },
        { id: 'default.pii', parameters: { redact: true } },
        { id: 'default.regexMatch', parameters: { rule: '^Mail \\[REDACTED_EMAIL_ADDRESS\\]$' } },
      ],
      chatContext('ann@example.org'),
    );
    expect(outcome.results.map((r) => [r.verdict, r.transformed])).toEqual([
      [true, true],
      [true, true],
      [true, false],
    ]);
    expect(outcome.transformed).toBe(true);
    expect(userText(outcome)).toBe('Mail [REDACTED_EMAIL_ADDRESS]');
  });

  it('leaves the caller’s body untouched and returns it when nothing changes', async () => {
    const context: GuardrailContext = chatContext('keep me');
    const before = JSON.stringify(context.request.json);
    const changed = await runChecks([{ id: 'default.addPrefix', parameters: { prefix: '!' } }], context);
    expect(JSON.stringify(context.request.json)).toBe(before);
    expect(userText(changed)).toBe('!keep me');
    const same = await runChecks([{ id: 'default.wordCount', parameters: {} }], context);
    expect(same).toMatchObject({ transformed: false });
    expect(same.request).toBe(context.request.json);
  });

  it('skips disabled checks and checks made for the other hook; they do not count', async () => {
    const outcome = await runChecks(
      [
        { id: 'default.regexMatch', parameters: { rule: 'never' }, is_enabled: false },
        { id: 'default.jsonKeys', parameters: { keys: ['a'], operator: 'all' } },
        { id: 'default.wordCount', parameters: { maxWords: 5 } },
      ],
      chatContext('two words'),
    );
    expect(outcome.results.map((r) => r.skipped)).toEqual([true, true, false]);
    expect(outcome.verdict).toBe(true);
  });

  it('fails unknown ids and bad parameters without throwing', async () => {
    const outcome = await runChecks(
      [{ id: 'acme.unknown' }, { id: 'default.regexMatch', parameters: { rule: '(' } }],
      chatContext('hi'),
    );
    expect(outcome.verdict).toBe(false);
    expect(outcome.results.map((r) => r.error)).toEqual([
      "unknown check id 'acme.unknown'",
      expect.stringMatching(/^invalid parameters \(rule\)/),
    ]);
  });

  it('gives up at once when the request is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const outcome = await runChecks(
      [{ id: 'default.wordCount', parameters: {} }],
      chatContext('hi', { signal: controller.signal }),
    );
    expect(outcome.results[0]).toMatchObject({ verdict: false, error: 'the request was aborted' });
  });
});
