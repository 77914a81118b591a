import { describe, expect, it } from 'vitest';
import { waitingAnswerGuards } from '../../src/gateway/guardrails/request-guard.js';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content }],
  ...extra,
});

/** A chat request through the gateway with an inline config carrying guardrails. */
async function send(g: GatewayHarness, config: Record<string, unknown>, body: Record<string, unknown>) {
  const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-api-key': g.adminKey,
      authorization: 'Bearer provider-secret-key',
      'x-service-config': JSON.stringify({ provider: 'openai', custom_host: g.mock.baseUrl, ...config }),
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

describe('guardrails on gateway requests', () => {
  it('denies with 446 and hook_results before any provider call when an input guardrail with deny fails', async () => {
    const g = await startGateway();
    const config = { input_guardrails: [{ 'default.contains': { operator: 'none', words: ['secret'] }, deny: true }] };
    const denied = await send(g, config, chat('tell me the secret'));
    expect(denied.status, denied.text).toBe(446);
    const body = JSON.parse(denied.text);
    expect(body.error.code).toBe('HOOKS_DENIED');
    expect(body.hook_results.before_request_hooks[0].verdict).toBe(false);
    expect(body.hook_results.before_request_hooks[0].checks[0].id).toBe('default.contains');
    expect(g.mock.requests).toHaveLength(0);

    const passed = await send(g, config, chat('tell me a story'));
    expect(passed.status, passed.text).toBe(200);
    expect(JSON.parse(passed.text).hook_results.before_request_hooks[0].verdict).toBe(true);
    expect(g.mock.requests).toHaveLength(1);

    const logs = await g.logs(2);
    const deniedLog = logs.find((l: any) => l.status_code === 446);
    expect(deniedLog.guardrail_verdict).toBe('denied');
    expect(deniedLog.hook_results.before_request_hooks[0].checks[0].verdict).toBe(false);
  });

  it('lets a failed guardrail without deny through with 246 and the results', async () => {
    const g = await startGateway();
    const config = { input_guardrails: [{ 'default.wordCount': { minWords: 10, maxWords: 100 } }] };
    const res = await send(g, config, chat('too short'));
    expect(res.status, res.text).toBe(246);
    const body = JSON.parse(res.text);
    expect(body.choices[0].message.content).toBeTruthy();
    expect(body.hook_results.before_request_hooks[0].verdict).toBe(false);
    expect(g.mock.requests).toHaveLength(1);
  });

  it('sends the provider the redacted request when a PII check redacts', async () => {
    const g = await startGateway();
    const config = { input_guardrails: [{ 'default.pii': { redact: true } }] };
    const res = await send(g, config, chat('mail me at jane.doe@example.com please'));
    expect(res.status, res.text).toBe(200);
    const sent = g.mock.requests[0]!.json as any;
    expect(JSON.stringify(sent)).not.toContain('jane.doe@example.com');
  });

  it('denies an answer whose output guardrail fails, and carries the verdict on a stream before [DONE]', async () => {
    const g = await startGateway();
    const deny = {
      output_guardrails: [{ 'default.contains': { operator: 'any', words: ['never-said'] }, deny: true }],
    };
    const res = await send(g, deny, chat('hello'));
    expect(res.status, res.text).toBe(446);
    expect(JSON.parse(res.text).hook_results.after_request_hooks[0].verdict).toBe(false);

    const flow = { output_guardrails: [{ 'default.wordCount': { minWords: 1, maxWords: 1000 } }] };
    const streamed = await send(g, flow, chat('hello', { stream: true }));
    expect(streamed.status).toBe(200);
    const events = streamed.text.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const verdict = JSON.parse(events.at(-2)!.slice('data: '.length));
    expect(verdict.hook_results.after_request_hooks[0].verdict).toBe(true);

    const held = await send(g, deny, chat('hello', { stream: true }));
    expect(held.status, held.text).toBe(446);
  });

  it("sends the provider's answer with the results last, and keeps nothing per answer once requests have ended", async () => {
    const g = await startGateway();
    const input = { input_guardrails: [{ 'default.characterCount': { minCharacters: 1, maxCharacters: 1000 } }] };
    const res = await send(g, input, chat('hello'));
    expect(res.status, res.text).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.text));
    const body = JSON.parse(res.text);
    expect(Object.keys(body).at(-1)).toBe('hook_results');
    expect(body.hook_results.before_request_hooks[0].verdict).toBe(true);
    const streamed = await send(g, input, chat('hello', { stream: true }));
    const events = streamed.text.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(JSON.parse(events.at(-2)!.slice('data: '.length)).hook_results.before_request_hooks[0].verdict).toBe(true);
    const output = { output_guardrails: [{ 'default.wordCount': { minWords: 1, maxWords: 1000 } }] };
    expect((await send(g, output, chat('hello'))).status).toBe(200);
    const logs = await g.logs(3);
    expect(logs.every((l: any) => l.guardrail_verdict === 'passed')).toBe(true);
    expect(waitingAnswerGuards()).toBe(0);
  });
});
