import { describe, expect, it } from 'vitest';
import { withHookResults, withHookResultsAfter } from '../../../src/gateway/guardrails/hook-results.js';
import { GuardrailRun, type GuardrailFeedback } from '../../../src/gateway/guardrails/request-guardrails.js';
import type { ResolvedGuardrail } from '../../../src/guardrails/store/index.js';
import { createManualClock } from '../../../src/lib/clock.js';
import { DEFAULT_SERVER_OPTIONS } from '../../../src/guardrails/types.js';

const feedback = { value: 5, weight: 1, metadata: '' };

function guardrail(
  name: string,
  checks: Array<[string, Record<string, unknown>]>,
  actions: { deny?: boolean; async?: boolean } = {},
): ResolvedGuardrail {
  return {
    id: null,
    slug: null,
    version_id: null,
    version: null,
    name,
    checks: checks.map(([id, parameters]) => ({ id, parameters, is_enabled: true, check: id as never })),
    actions: {
      deny: actions.deny ?? false,
      async: actions.async ?? false,
      on_success: { feedback },
      on_fail: { feedback: { ...feedback, value: -5 } },
    },
    source: `input_guardrails[${name}]`,
  };
}

function newRun() {
  const recorded: GuardrailFeedback[] = [];
  const run = new GuardrailRun(
    { clock: createManualClock(0), server: DEFAULT_SERVER_OPTIONS, recordFeedback: (f) => recorded.push(f) },
    {
      endpoint: 'chatComplete',
      headers: {},
      metadata: {},
      model: 'gpt-4o',
      traceId: 't-1',
      signal: new AbortController().signal,
    },
  );
  return { run, recorded };
}

const chat = (text: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content: text }] });
const verdicts = (run: GuardrailRun) =>
  run.before.map((hook) => [hook.id, hook.checks.map((c) => [c.id, c.verdict, c.data])]);

describe('a hook run', () => {
  it('reads the text once per body: a check after a redaction, in the same or the next guardrail, sees the redacted text', async () => {
    const { run } = newRun();
    const pass = await run.run(
      'beforeRequestHook',
      [
        guardrail('first', [
          ['default.contains', { words: ['ada@example.com'], operator: 'any' }],
          ['default.pii', { categories: ['EMAIL_ADDRESS'], redact: true }],
          ['default.contains', { words: ['[REDACTED_EMAIL_ADDRESS]'], operator: 'any' }],
          ['default.regexMatch', { rule: 'ada@' }],
        ]),
        guardrail('second', [
          ['default.wordCount', { minWords: 0, maxWords: 100 }],
          ['default.regexMatch', { rule: '^write to \\[REDACTED_EMAIL_ADDRESS\\]$' }],
        ]),
      ],
      { request: chat('write to ada@example.com') },
    );
    expect(pass.changed).toBe(true);
    expect(verdicts(run)).toEqual([
      [
        'first',
        [
          ['default.contains', true, { operator: 'any', found: ['ada@example.com'], missing: [] }],
          ['default.pii', true, { found: { EMAIL_ADDRESS: 1 }, redacted: true }],
          ['default.contains', true, { operator: 'any', found: ['[REDACTED_EMAIL_ADDRESS]'], missing: [] }],
          ['default.regexMatch', false, { rule: 'ada@', not: false }],
        ],
      ],
      [
        'second',
        [
          ['default.wordCount', true, { count: 3, minWords: 0, maxWords: 100, not: false }],
          ['default.regexMatch', true, { rule: '^write to \\[REDACTED_EMAIL_ADDRESS\\]$', not: false }],
        ],
      ],
    ]);
  });

  it('gives each regex check of a request its own verdict, and the feedback names each check', async () => {
    const { run, recorded } = newRun();
    await run.run(
      'beforeRequestHook',
      [
        guardrail('regexes', [
          ['default.regexMatch', { rule: '^hello' }],
          ['default.regexMatch', { rule: 'sk-[A-Za-z0-9]{20,}', not: true }],
          ['default.regexMatch', { rule: 'bye$' }],
        ]),
      ],
      { request: chat('hello there') },
    );
    expect(run.before[0]!.checks.map((c) => c.verdict)).toEqual([true, true, false]);
    expect(recorded).toEqual([
      {
        traceId: 't-1',
        value: -5,
        weight: 1,
        metadata: {
          successfulChecks: 'default.regexMatch,default.regexMatch',
          failedChecks: 'default.regexMatch',
          erroredChecks: '',
        },
      },
    ]);
  });

  it('gives the log the same results as the answer, and all of them when an async guardrail only records', async () => {
    const { run } = newRun();
    await run.run(
      'beforeRequestHook',
      [guardrail('sync', [['default.contains', { words: ['x'], operator: 'none' }]])],
      {
        request: chat('hello'),
      },
    );
    const answer = run.visibleJson();
    expect(answer).toBe(JSON.stringify(run.visible()));
    const logged = await run.settledJson();
    expect(logged).toEqual({ json: JSON.stringify((await run.settled()).results), verdict: 'passed' });
    expect(logged.json).toBe(answer);

    const withAsync = newRun().run;
    await withAsync.run(
      'beforeRequestHook',
      [
        guardrail('sync', [['default.contains', { words: ['x'], operator: 'none' }]]),
        guardrail('async', [['default.contains', { words: ['hello'], operator: 'none' }]], { async: true }),
      ],
      { request: chat('hello') },
    );
    const visible = withAsync.visibleJson();
    const all = await withAsync.settledJson();
    expect(JSON.parse(visible).before_request_hooks.map((r: { id: string }) => r.id)).toEqual(['sync']);
    expect(JSON.parse(all.json).before_request_hooks.map((r: { id: string }) => r.id)).toEqual(['sync', 'async']);
    expect(all.verdict).toBe('failed');
    // Results added after the answer was written are in the next text.
    await withAsync.run('afterRequestHook', [guardrail('out', [['default.contains', { words: ['y'] }]])], {
      request: chat('hello'),
      response: { json: { choices: [{ message: { content: 'y' } }] }, status: 200 },
    });
    expect(JSON.parse(withAsync.visibleJson()).after_request_hooks.map((r: { id: string }) => r.id)).toEqual(['out']);
  });

  it('keeps the order of results and feedback around an async guardrail, and judges a hook without one at once', async () => {
    const { run, recorded } = newRun();
    await run.run(
      'beforeRequestHook',
      [
        guardrail('async', [['default.contains', { words: ['x'], operator: 'none' }]], { async: true }),
        guardrail('second', [['default.contains', { words: ['x'], operator: 'none' }]]),
        guardrail('third', [['default.contains', { words: ['x'], operator: 'none' }]]),
      ],
      { request: chat('hello') },
    );
    await run.settled();
    expect(run.before.map((r) => r.id)).toEqual(['second', 'async', 'third']);
    expect(recorded).toHaveLength(3);

    const sync = newRun().run;
    const pass = sync.runNow(
      'beforeRequestHook',
      [
        guardrail('first', [['default.contains', { words: ['x'], operator: 'none' }]]),
        guardrail('denies', [['default.contains', { words: ['hello'], operator: 'none' }]], { deny: true }),
        guardrail('never', [['default.contains', { words: ['x'], operator: 'none' }]]),
      ],
      { request: chat('hello') },
    );
    expect(pass).not.toBeInstanceOf(Promise);
    expect(pass).toMatchObject({ denied: true, changed: false });
    expect(sync.before.map((r) => r.id)).toEqual(['first', 'denies']);
  });
});

describe('withHookResults', () => {
  const results = {
    before_request_hooks: [{ id: 'g', checks: [{ id: 'c', data: { n: 1.5 } }] }],
    after_request_hooks: [],
  };
  const json = JSON.stringify(results);

  it('writes what JSON.stringify({ ...body, hook_results }) writes', () => {
    const bodies: Array<Record<string, unknown>> = [
      { id: 'chatcmpl-1', choices: [{ message: { content: 'hi "there"\n' } }], usage: { total_tokens: 3 } },
      {},
      { 2: 'two', b: 1, 1: 'one', a: [null, true, -0, 1e21] },
      JSON.parse('{"__proto__": {"x": 1}, "y": "\\u2028"}') as Record<string, unknown>,
      { hook_results: 'the provider sent its own', after: 1 },
    ];
    for (const body of bodies)
      expect(withHookResults(body, json)).toBe(JSON.stringify({ ...body, hook_results: results }));
  });

  it('after the provider bytes: the same JSON value, the provider text kept as it came', () => {
    const texts = [
      '{"id":"chatcmpl-1","choices":[{"message":{"content":"hi \\"there\\"\\n"}}],"usage":{"total_tokens":3}}',
      '{\n  "id": "chatcmpl-2",\n  "object": "chat.completion"\n}\n',
      '{}',
      '{ \r\n }',
      '{"2":"two","b":1,"1":"one","a":[null,true,-0,1e21],"é":"ü 😀"}',
      '{"__proto__": {"x": 1}, "y": "\\u2028"}',
    ];
    for (const text of texts) {
      const body = JSON.parse(text) as Record<string, unknown>;
      const out = withHookResultsAfter(Buffer.from(text), body, json);
      expect(Buffer.isBuffer(out)).toBe(true);
      const written = out.toString('utf8');
      expect(written.startsWith(text.trimEnd().slice(0, -1))).toBe(true);
      expect(JSON.parse(written)).toEqual({ ...body, hook_results: results });
      expect(written.endsWith(`"hook_results":${json}}`)).toBe(true);
    }
    // The provider's own hook_results is replaced in its place, as before.
    const own = { hook_results: 'the provider sent its own', after: 1 };
    expect(withHookResultsAfter(Buffer.from(JSON.stringify(own)), own, json)).toBe(
      JSON.stringify({ ...own, hook_results: results }),
    );
  });
});
