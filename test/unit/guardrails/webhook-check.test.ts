import { createServer, type IncomingMessage } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Timers } from '../../../src/guardrails/check-settle.js';
import { runChecks } from '../../../src/guardrails/run-checks.js';
import { listenOnLoopback } from '../../helpers/loopback-server.js';
import { answerContext, chatContext, runOne } from './context.js';

const server = { allowPrivateContentUrls: false, allowPrivateCheckEndpoints: true };

/** A webhook on 127.0.0.1 that answers with `answer(body)`, or never when it returns null. */
async function startWebhook(answer: (body: any, req: IncomingMessage) => { status?: number; json: unknown } | null) {
  const seen: { body: any; headers: IncomingMessage['headers']; closed: Promise<void> }[] = [];
  const s = await listenOnLoopback(
    createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => (raw += String(chunk)));
      req.on('end', () => {
        const body = JSON.parse(raw);
        const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
        seen.push({ body, headers: req.headers, closed });
        const reply = answer(body, req);
        if (reply)
          res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json));
      });
    }),
  );
  onTestFinished(() => s.close());
  return { url: s.url, seen };
}

describe('default.webhook', () => {
  it('takes the webhook’s verdict, sends its headers but never the client’s', async () => {
    const hook = await startWebhook((body) => ({
      json: { verdict: !JSON.stringify(body.request.json).includes('forbidden'), explanation: 'checked by hook' },
    }));
    const parameters = { webhookURL: `${hook.url}/check`, headers: { authorization: 'Bearer hook-secret' } };
    const context = chatContext('this is forbidden', {
      request: {
        json: { model: 'm', messages: [{ role: 'user', content: 'this is forbidden' }] },
        headers: { 'x-service-api-key': 'client-key' },
      },
      server,
    });
    const fail = await runOne('default.webhook', parameters, context);
    expect(fail).toMatchObject({ verdict: false, explanation: 'checked by hook' });
    expect((await runOne('default.webhook', parameters, chatContext('fine', { server }))).verdict).toBe(true);
    expect(hook.seen[0]!.headers.authorization).toBe('Bearer hook-secret');
    expect(hook.seen[0]!.body).toMatchObject({
      eventType: 'beforeRequestHook',
      endpoint: 'chatComplete',
      provider: 'openai',
    });
    expect(JSON.stringify(hook.seen[0]!.body)).not.toContain('client-key');
    expect(JSON.stringify(fail)).not.toContain('hook-secret');
  });

  it('applies the webhook’s transformed answer', async () => {
    const hook = await startWebhook((body) => ({
      json: {
        verdict: true,
        transformedData: {
          response: {
            json: {
              ...body.response.json,
              choices: [{ index: 0, message: { role: 'assistant', content: 'rewritten' } }],
            },
          },
        },
      },
    }));
    const result = await runOne('default.webhook', { webhookURL: hook.url }, answerContext('original', { server }));
    expect(result.transformed).toBe(true);
    expect(result.outcome.response).toMatchObject({ choices: [{ message: { content: 'rewritten' } }] });
  });

  it('a webhook that never answers times out, the connection is dropped, and failOnError decides', async () => {
    const hook = await startWebhook(() => null);
    const pending: (() => void)[] = [];
    const timers: Timers = { setTimeout: (fire) => pending.push(fire), clearTimeout: () => {} };
    for (const [round, failOnError] of [false, true].entries()) {
      const running = runChecks(
        [{ id: 'default.webhook', parameters: { webhookURL: hook.url, timeout: 2000, failOnError } }],
        chatContext('hi', { server }),
        { timers },
      );
      while (hook.seen.length <= round) await new Promise((resolve) => setImmediate(resolve));
      pending.shift()!();
      const outcome = await running;
      expect(outcome.results[0]).toMatchObject({
        timedOut: true,
        verdict: !failOnError,
        error: 'timed out after 2000 ms',
      });
      await hook.seen[round]!.closed; // the abandoned request was aborted, not left hanging
    }
  });

  it('an error status or an answer without a verdict is an error', async () => {
    const hook = await startWebhook((body) =>
      body.metadata.mode === 'status' ? { status: 500, json: {} } : { json: { ok: true } },
    );
    const status = await runOne(
      'default.webhook',
      { webhookURL: hook.url, failOnError: true },
      chatContext('x', { server, metadata: { mode: 'status' } }),
    );
    expect(status).toMatchObject({ verdict: false, error: 'webhook: the endpoint answered HTTP 500' });
    const shape = await runOne('default.webhook', { webhookURL: hook.url }, chatContext('x', { server }));
    expect(shape).toMatchObject({ verdict: true, error: 'webhook: the answer has no boolean verdict' });
  });

  it('refuses a private webhook unless the server allows it', async () => {
    const hook = await startWebhook(() => ({ json: { verdict: true } }));
    const refused = await runOne('default.webhook', { webhookURL: hook.url, failOnError: true }, chatContext('x'));
    expect(refused).toMatchObject({ verdict: false, error: 'webhook: 127.0.0.1 is a private address' });
    expect(hook.seen).toHaveLength(0);
  });
});

describe('default.thirdPartyDetection', () => {
  it('sends the policy and texts with the key, and applies redacted texts', async () => {
    const vendor = await startWebhook((body) => ({
      json: {
        verdict: false,
        categories: ['prompt_injection'],
        redacted_texts: body.texts.map((t: string) => t.replace('secret', '***')),
      },
    }));
    const result = await runOne(
      'default.thirdPartyDetection',
      { policyId: 'pol-1', url: vendor.url, apiKey: 'vendor-key' },
      chatContext('my secret', { server }),
    );
    expect(result).toMatchObject({
      verdict: false,
      data: { policyId: 'pol-1', categories: ['prompt_injection'] },
      transformed: true,
    });
    expect(vendor.seen[0]!.headers.authorization).toBe('Bearer vendor-key');
    expect(vendor.seen[0]!.body).toMatchObject({
      policy_id: 'pol-1',
      hook: 'beforeRequestHook',
      texts: ['You are terse.', 'my secret'],
    });
    expect(JSON.stringify(result.outcome.request)).toContain('my ***');
  });
});
