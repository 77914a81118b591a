import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { RequestAbort } from '../../../src/gateway/guardrails/request-abort.js';
import { GuardrailRun } from '../../../src/gateway/guardrails/request-guardrails.js';
import { createVerdictStream } from '../../../src/gateway/guardrails/stream-guard.js';
import { runChecksNow } from '../../../src/guardrails/run-checks.js';
import type { ResolvedGuardrail } from '../../../src/guardrails/store/index.js';
import {
  DEFAULT_SERVER_OPTIONS,
  type CheckDefinition,
  type CheckResult,
  type GuardrailContext,
} from '../../../src/guardrails/types.js';
import { createManualClock } from '../../../src/lib/clock.js';

/** A catalogue entry that runs `run` at the request hook. */
const definition = (id: string, run: (context: GuardrailContext) => CheckResult | Promise<CheckResult>) =>
  ({
    id,
    hooks: ['beforeRequestHook'],
    prepare: () => ({ ok: true, check: { timeoutMs: 1000, failOnError: true, run } }),
    redact: (p: unknown) => p,
  }) as CheckDefinition;

/** A context whose signal is made on first read, like the gateway's. */
function lazyContext(abort: RequestAbort, headers: () => Record<string, string>): GuardrailContext {
  return {
    hook: 'beforeRequestHook',
    endpoint: 'chatComplete',
    request: {
      json: { messages: [{ role: 'user', content: 'hi' }] },
      get headers() {
        return headers();
      },
    },
    metadata: {},
    server: DEFAULT_SERVER_OPTIONS,
    get signal() {
      return abort.signal;
    },
  };
}

describe("a guarded request's abort", () => {
  it('is a flag until a check reads the signal, which is then aborted if the client left before', () => {
    const abort = new RequestAbort();
    expect(abort.aborted).toBe(false);
    abort.abort();
    expect(abort.aborted).toBe(true);
    const signal = abort.signal;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('AbortError');
    expect(abort.signal).toBe(signal);
  });

  it('aborts a signal read before the client left', () => {
    const abort = new RequestAbort();
    const signal = abort.signal;
    expect(signal.aborted).toBe(false);
    abort.abort();
    expect(signal.aborted).toBe(true);
    expect(abort.aborted).toBe(true);
  });
});

describe('checks run on demand', () => {
  it('judges checks that answer at once without a promise, and makes neither the signal nor the headers unread', () => {
    let headersMade = 0;
    const abort = new RequestAbort();
    const context = lazyContext(abort, () => {
      headersMade++;
      return { 'x-a': '1' };
    });
    const catalogue = { pass: definition('pass', () => ({ verdict: true, explanation: 'ok' })) };
    const outcome = runChecksNow([{ id: 'pass' }, { id: 'pass' }], context, {
      catalogue,
      aborted: () => abort.aborted,
    });
    expect(outcome).not.toBeInstanceOf(Promise);
    expect((outcome as Awaited<typeof outcome>).results.map((r) => r.verdict)).toEqual([true, true]);
    expect(headersMade).toBe(0);
    // The signal was never made: aborting now only sets the flag.
    abort.abort();
    expect(abort.aborted).toBe(true);
  });

  it('gives a check that waits its own signal, aborted when the client leaves, and the next check the outcome after it', async () => {
    const abort = new RequestAbort();
    const context = lazyContext(abort, () => ({}));
    let seen: AbortSignal | null = null;
    const catalogue = {
      waits: definition(
        'waits',
        (c) =>
          new Promise<CheckResult>((resolve) => {
            seen = c.signal;
            c.signal.addEventListener('abort', () => resolve({ verdict: true, explanation: 'stopped' }));
          }),
      ),
      pass: definition('pass', () => ({ verdict: true, explanation: 'ok' })),
    };
    const running = runChecksNow([{ id: 'waits' }, { id: 'pass' }], context, {
      catalogue,
      aborted: () => abort.aborted,
    });
    expect(running).toBeInstanceOf(Promise);
    expect(seen!.aborted).toBe(false);
    abort.abort();
    const outcome = await running;
    expect(seen!.aborted).toBe(true);
    expect(outcome.results.map((r) => [r.id, r.error ?? null])).toEqual([
      ['waits', 'the request was aborted'],
      ['pass', 'the request was aborted'],
    ]);
  });

  it('refuses to start a check once the client has left, without making the signal', () => {
    const abort = new RequestAbort();
    abort.abort();
    const catalogue = { pass: definition('pass', () => ({ verdict: true, explanation: 'ok' })) };
    const outcome = runChecksNow(
      [{ id: 'pass' }],
      lazyContext(abort, () => ({})),
      {
        catalogue,
        aborted: () => abort.aborted,
      },
    );
    expect((outcome as Awaited<typeof outcome>).results[0]!.error).toBe('the request was aborted');
  });

  it('keeps the headers and the signal for the checks after one that changed the request', () => {
    const abort = new RequestAbort();
    const context = lazyContext(abort, () => ({ authorization: 'Bearer x' }));
    const read: Array<[unknown, string | undefined, boolean]> = [];
    const catalogue = {
      rewrite: definition('rewrite', () => ({
        verdict: true,
        explanation: 'changed',
        transformed: { request: { messages: [{ role: 'user', content: 'changed' }] } },
      })),
      reads: definition('reads', (c) => {
        read.push([c.request.json, c.request.headers.authorization, c.signal.aborted]);
        return { verdict: true, explanation: 'ok' };
      }),
    };
    const outcome = runChecksNow([{ id: 'rewrite' }, { id: 'reads' }], context, { catalogue });
    expect(outcome).not.toBeInstanceOf(Promise);
    expect(read).toEqual([[{ messages: [{ role: 'user', content: 'changed' }] }, 'Bearer x', false]]);
    expect((outcome as Awaited<typeof outcome>).transformed).toBe(true);
  });

  it("copies a guarded request's headers once, when a check first reads them", async () => {
    let made = 0;
    const run = new GuardrailRun(
      { clock: createManualClock(0), server: DEFAULT_SERVER_OPTIONS, recordFeedback: () => undefined },
      {
        endpoint: 'chatComplete',
        headers: () => {
          made++;
          return { 'x-user': 'u1' };
        },
        metadata: {},
        model: 'gpt-4o',
        traceId: 't',
        signal: new RequestAbort(),
      },
    );
    const feedback = { value: 1, weight: 0, metadata: '' };
    const guardrail = (checks: ResolvedGuardrail['checks']): ResolvedGuardrail => ({
      id: null,
      slug: null,
      version_id: null,
      version: null,
      name: 'g',
      checks,
      actions: { deny: true, async: false, on_success: { feedback }, on_fail: { feedback } },
      source: 'input_guardrails[0]',
    });
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] };
    const pass = run.runNow(
      'beforeRequestHook',
      [
        guardrail([
          { id: 'default.wordCount', parameters: { minWords: 1 }, is_enabled: true, check: 'default.wordCount' },
        ]),
      ],
      { request: body },
    );
    expect(pass).not.toBeInstanceOf(Promise);
    expect(made).toBe(0);
    expect(run.headers()).toEqual({ 'x-user': 'u1' });
    expect(run.headers()).toEqual({ 'x-user': 'u1' });
    expect(made).toBe(1);
  });
});

describe("a guarded stream's events", () => {
  /** The stream as sent with and without collecting the text (whose path never passes chunks as they are). */
  async function bothWays(chunks: string[]) {
    const through = async (collectText: boolean) => {
      const out = Readable.from(chunks.map((c) => Buffer.from(c))).pipe(
        createVerdictStream(() => 'data: {"verdict":true}\n\n', { collectText }),
      );
      let sent = '';
      for await (const piece of out) sent += String(piece);
      return sent;
    };
    return { collected: await through(true), passed: await through(false) };
  }

  it.each([
    ['whole events', ['data: a\n\ndata: b\n\n', 'data: c\n\ndata: [DONE]\n\n']],
    ['CRLF separators', ['data: a\r\n\r\ndata: b\r\n\r\n', 'data: [DONE]\r\n\r\n']],
    ['empty events', ['data: a\n\n\n\ndata: b\n\n', '\n\ndata: c\n\n', 'data: [DONE]\n\n']],
    ['a blank line too many at the end', ['data: a\n\n\n', 'data: b\n\ndata: [DONE]\n\n']],
    ['events cut across chunks', ['data: a\n', '\ndata: b', '\n\ndata: [DO', 'NE]\n\n']],
    ['an event of several lines', ['event: x\ndata: a\n\n', ': comment\n\ndata: [DONE]\n\n']],
    ['no end marker', ['data: a\n\n', 'data: b\n\n']],
    ['non-ASCII text', ['data: {"t":"héllo – ✓"}\n\n', 'data: [DONE]\n\n']],
  ])('sends the same bytes as when the text is read (%s)', async (_name, chunks) => {
    const { collected, passed } = await bothWays(chunks);
    expect(passed).toBe(collected);
    expect(passed).toContain('data: {"verdict":true}\n\n');
  });
});
