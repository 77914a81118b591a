import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { GatewayReply } from '../../../src/gateway/exchange.js';
import {
  guardAnswer,
  RequestGuard,
  waitingAnswerGuards,
  type GatewayGuardrails,
} from '../../../src/gateway/guardrails/request-guard.js';
import { GuardrailRun } from '../../../src/gateway/guardrails/request-guardrails.js';
import { createVerdictStream } from '../../../src/gateway/guardrails/stream-guard.js';
import type { RequestLogDraft } from '../../../src/gateway/request-log-draft.js';
import type { ResolvedGuardrail } from '../../../src/guardrails/store/index.js';
import { DEFAULT_SERVER_OPTIONS } from '../../../src/guardrails/types.js';
import { createManualClock } from '../../../src/lib/clock.js';

const feedback = { value: 5, weight: 0, metadata: '' };

function guardrail(checks: Array<[string, Record<string, unknown>]>): ResolvedGuardrail {
  return {
    id: null,
    slug: null,
    version_id: null,
    version: null,
    name: 'g',
    checks: checks.map(([id, parameters]) => ({ id, parameters, is_enabled: true, check: id as never })),
    actions: { deny: true, async: false, on_success: { feedback }, on_fail: { feedback } },
    source: 'input_guardrails[0]',
  };
}

/** A guard of one request with these input and output guardrails, and a reply that records its status. */
function newGuard(before: ResolvedGuardrail[], after: ResolvedGuardrail[]) {
  const clock = createManualClock(0);
  const deps = {
    clock,
    server: DEFAULT_SERVER_OPTIONS,
    recordFeedback: () => undefined,
  } as unknown as GatewayGuardrails;
  const run = new GuardrailRun(
    { clock, server: DEFAULT_SERVER_OPTIONS, recordFeedback: () => undefined },
    {
      endpoint: 'chatComplete',
      headers: {},
      metadata: {},
      model: 'gpt-4o',
      traceId: 't',
      signal: new AbortController().signal,
    },
  );
  const draft = { hookResults: null, guardrailVerdict: null } as unknown as RequestLogDraft;
  const input = { capture: 0, draft } as never;
  const guard = new RequestGuard(deps, input, run, before, after, false);
  const reply = { raw: {}, statusCode: 200 } as { raw: object; statusCode: number; code(status: number): unknown };
  reply.code = (status: number) => {
    reply.statusCode = status;
    return reply;
  };
  return { guard, reply: reply as unknown as GatewayReply, draft };
}

const request = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello there' }] };
const answer = Buffer.from('{"id":"c1","choices":[{"message":{"role":"assistant","content":"hi"}}]}');
const passes = guardrail([['default.characterCount', { minCharacters: 1, maxCharacters: 100 }]]);

describe("the answer's guardrail step", () => {
  it('adds the results in the same step when no output guardrail judges the answer, and keeps nothing once sent', async () => {
    const { guard, reply } = newGuard([passes], []);
    expect(await guard.checkRequest(request)).toBe(request);
    guard.guardAnswer(reply, {} as RequestLogDraft, request, null, 'openai');
    expect(waitingAnswerGuards()).toBe(1);
    const sent = guardAnswer(reply, answer);
    expect(sent).not.toBeInstanceOf(Promise);
    const body = JSON.parse(String(sent));
    expect(body.id).toBe('c1');
    expect(Object.keys(body).at(-1)).toBe('hook_results');
    expect(body.hook_results.before_request_hooks[0].verdict).toBe(true);
    expect(waitingAnswerGuards()).toBe(0);
    // A second send (an error after the answer) passes through untouched.
    expect(guardAnswer(reply, 'again')).toBe('again');
  });

  it('judges the answer first when an output guardrail applies', async () => {
    const { guard, reply } = newGuard([], [guardrail([['default.contains', { operator: 'any', words: ['hi'] }]])]);
    guard.guardAnswer(reply, {} as RequestLogDraft, request, null, 'openai');
    const sent = guardAnswer(reply, answer);
    expect(sent).toBeInstanceOf(Promise);
    const body = JSON.parse(String(await sent));
    expect(body.hook_results.after_request_hooks[0].verdict).toBe(true);
    expect(reply.statusCode).toBe(200);
  });

  it('forgets an answer that was never sent once the request is recorded (the client left first)', async () => {
    const { guard, reply, draft } = newGuard([passes], []);
    await guard.checkRequest(request);
    guard.guardAnswer(reply, {} as RequestLogDraft, request, null, 'openai');
    expect(waitingAnswerGuards()).toBe(1);
    await guard.record(draft);
    expect(waitingAnswerGuards()).toBe(0);
    expect(draft.guardrailVerdict).toBe('passed');
  });

  it('passes a stream on the same with or without collecting its text, the verdict before [DONE]', async () => {
    const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}`;
    const sse = `${chunk('Hel')}\r\n\r\n${chunk('lo')}\n\n: comment\n\ndata:[DONE]\n\n`;
    const through = async (collectText: boolean) => {
      const seen: string[] = [];
      const out = Readable.from([sse.slice(0, 20), sse.slice(20)]).pipe(
        createVerdictStream(
          async (text) => {
            seen.push(text);
            return 'data: {"verdict":true}\n\n';
          },
          { collectText },
        ),
      );
      let sent = '';
      for await (const piece of out) sent += String(piece);
      return { sent, seen };
    };
    const collected = await through(true);
    const passed = await through(false);
    expect(passed.sent).toBe(collected.sent);
    expect(collected.seen).toEqual(['Hello']);
    expect(passed.seen).toEqual(['']);
    expect(passed.sent.endsWith('data: {"verdict":true}\n\ndata:[DONE]\n\n')).toBe(true);
  });
});
