import { createServer } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { WORKSPACE_SCOPES } from '../../src/auth/scopes.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';
import { listenOnLoopback } from '../helpers/loopback-server.js';
import { mockReply } from '../helpers/mock-openai-upstream.js';

const chat = (content: unknown, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content }],
  ...extra,
});

interface Sent {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

/** A request through the gateway: `config` is a stored config's slug, an inline config, or none. */
async function send(
  g: GatewayHarness,
  config: string | Record<string, unknown> | null,
  body: unknown,
  options: { key?: string; path?: string; method?: string } = {},
): Promise<Sent> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-service-api-key': options.key ?? g.adminKey,
    authorization: 'Bearer provider-secret-key',
  };
  if (config === null) Object.assign(headers, g.viaMock);
  else headers['x-service-config'] = typeof config === 'string' ? config : JSON.stringify(config);
  const method = options.method ?? 'POST';
  const res = await fetch(`${g.baseUrl}${options.path ?? '/v1/chat/completions'}`, {
    method,
    headers,
    ...(method === 'GET' ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, json: parseOrNull(text), headers: res.headers };
}

function parseOrNull(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const target = (g: GatewayHarness, extra: Record<string, unknown> = {}) => ({
  provider: 'openai',
  custom_host: g.mock.baseUrl,
  ...extra,
});
const inline = (g: GatewayHarness, extra: Record<string, unknown>) => target(g, extra);

/** svcgw's flat log record of a response (hook results, verdict), with its bodies and the feedback on its trace. */
async function logOf(g: GatewayHarness, res: Sent) {
  const id = res.headers.get('x-service-request-id')!;
  await g.logs(1);
  for (let i = 0; i < 100; i++) {
    const got = await g.admin.get(`/v1/logs/${id}?log_format=flat`);
    if (got.status === 200 && got.body.hook_results !== undefined) return got.body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no log record ${id}`);
}

const userText = (request: { json?: unknown }) => JSON.stringify((request.json as any).messages);

describe('guardrails through the gateway: actions in stored configs', () => {
  it("denies with the guardrail's own message (the reference's create example), before any provider call, with feedback on the trace", async () => {
    const g = await startGateway();
    // The reference's example spelling: {onFail: "block", message}.
    const guard = await g.admin.post('/v1/guardrails', {
      name: 'Content filter',
      slug: 'content-filter',
      checks: [{ id: 'default.contains', parameters: { operator: 'any', words: ['confidential'] } }],
      actions: { onFail: 'block', message: 'Content policy violation', on_success: { feedback: { value: 3 } } },
    });
    expect(guard.status, JSON.stringify(guard.body)).toBe(200);
    // `operator: any` fails when a word is missing: this guardrail wants "confidential" in every prompt.
    const cfg = await g.admin.post('/v1/configs', {
      name: 'guarded',
      slug: 'guarded',
      config: inline(g, { input_guardrails: ['content-filter'] }),
    });
    expect(cfg.status, JSON.stringify(cfg.body)).toBe(200);

    const denied = await send(g, 'guarded', chat('a public note'));
    expect(denied.status, denied.text).toBe(446);
    expect(denied.json.error).toMatchObject({ code: 'HOOKS_DENIED', message: 'Content policy violation' });
    const result = denied.json.hook_results.before_request_hooks[0];
    expect(result).toMatchObject({ id: 'content-filter', verdict: false, deny: true, guardrail_id: guard.body.id });
    expect(result.feedback).toMatchObject({ value: -5, weight: 1 });
    expect(g.mock.requests).toHaveLength(0);

    const passed = await send(g, 'guarded', chat('a confidential note'));
    expect(passed.status, passed.text).toBe(200);
    expect(passed.json.hook_results.before_request_hooks[0]).toMatchObject({ verdict: true, feedback: { value: 3 } });
    expect(g.mock.requests).toHaveLength(1);

    // Feedback lands on each request's trace.
    const deniedLog = await logOf(g, denied);
    expect(deniedLog.status_code).toBe(446);
    expect(deniedLog.guardrail_verdict).toBe('denied');
    expect(deniedLog.feedback).toHaveLength(1);
    expect(deniedLog.feedback[0]).toMatchObject({ value: -5, weight: 1 });
    expect(deniedLog.feedback[0].metadata.failedChecks).toBe('default.contains');
    const passedLog = await logOf(g, passed);
    expect(passedLog.guardrail_verdict).toBe('passed');
    expect(passedLog.feedback.map((f: any) => f.value)).toEqual([3]);
  });

  it('lets a failed guardrail without deny through with 246, and runs async guardrails off the answer, in the log only', async () => {
    const g = await startGateway();
    for (const [slug, actions] of [
      ['warn-length', { deny: false }],
      ['audit-shouting', { deny: true, async: true }],
    ] as const) {
      const res = await g.admin.post('/v1/guardrails', {
        name: slug,
        slug,
        checks:
          slug === 'warn-length'
            ? [{ id: 'default.wordCount', parameters: { minWords: 10, maxWords: 100 } }]
            : [{ id: 'default.alluppercase', parameters: {} }],
        actions,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    await g.admin.post('/v1/configs', {
      name: 'warned',
      slug: 'warned',
      config: inline(g, { input_guardrails: ['warn-length'], output_guardrails: ['audit-shouting'] }),
    });

    const res = await send(g, 'warned', chat('too short'));
    expect(res.status, res.text).toBe(246);
    expect(res.json.choices[0].message.content).toBeTruthy();
    // The async guardrail failed (the answer is not upper case) but neither denied nor shows.
    expect(res.json.hook_results.before_request_hooks).toHaveLength(1);
    expect(res.json.hook_results.before_request_hooks[0]).toMatchObject({ id: 'warn-length', verdict: false });
    expect(res.json.hook_results.after_request_hooks).toEqual([]);
    expect(g.mock.requests).toHaveLength(1);

    const log = await logOf(g, res);
    expect(log.status_code).toBe(246);
    expect(log.guardrail_verdict).toBe('failed'); // an async guardrail never makes it "denied"
    expect(log.hook_results.after_request_hooks).toHaveLength(1);
    expect(log.hook_results.after_request_hooks[0]).toMatchObject({
      id: 'audit-shouting',
      async: true,
      verdict: false,
      checks: [{ id: 'default.alluppercase', verdict: false }],
    });
    expect(typeof log.hook_results.after_request_hooks[0].checks[0].execution_time).toBe('number');
  });
});

describe('guardrails through the gateway: where they run', () => {
  it("runs a fallback target's own guardrails only when that target is tried", async () => {
    const g = await startGateway({ env: { SVCGW_LOG_BODIES: 'ON' } });
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        target(g, { name: 'first' }),
        target(g, {
          name: 'second',
          input_guardrails: [{ 'default.pii': { redact: true } }],
          output_guardrails: [{ 'default.wordCount': { minWords: 1, maxWords: 2 } }],
        }),
      ],
    };
    const body = chat('write to jane.doe@example.com');

    const first = await send(g, config, body);
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('x-service-target')).toBe('first');
    expect(first.json.hook_results).toBeUndefined(); // nothing ran: the second target was not tried
    expect(userText(g.mock.requests[0]!)).toContain('jane.doe@example.com');

    g.mock.behave({ kind: 'error', status: 500 }, { times: 1 });
    const second = await send(g, config, body);
    expect(second.headers.get('x-service-target')).toBe('second');
    expect(second.status, second.text).toBe(246); // its output guardrail failed (the answer has 5 words)
    expect(userText(g.mock.requests[1]!)).toContain('jane.doe@example.com'); // the first target got it as sent
    expect(userText(g.mock.requests[2]!)).not.toContain('jane.doe@example.com');
    expect(userText(g.mock.requests[2]!)).toContain('[REDACTED_EMAIL_ADDRESS]');
    expect(second.json.hook_results.before_request_hooks[0].checks[0].data).toMatchObject({
      found: { EMAIL_ADDRESS: 1 },
      redacted: true,
    });
    expect(second.json.hook_results.after_request_hooks[0].verdict).toBe(false);
    // The log keeps the body the serving target got.
    expect((await logOf(g, first)).request_body).toContain('jane.doe@example.com');
    expect((await logOf(g, second)).request_body).not.toContain('jane.doe@example.com');

    // A target's own deny stops the request there: no other target, 446.
    const denying = {
      strategy: { mode: 'fallback' },
      targets: [
        target(g, { name: 'first' }),
        target(g, { name: 'second', input_guardrails: [{ 'default.pii': {}, deny: true }] }),
      ],
    };
    g.mock.behave({ kind: 'error', status: 500 }, { times: 1 });
    const denied = await send(g, denying, body);
    expect(denied.status, denied.text).toBe(446);
    expect(g.mock.requests).toHaveLength(4); // only the first target was called
  });

  it("applies the workspace's default guardrails to every request of the workspace", async () => {
    const g = await startGateway();
    await createWorkspace(g.admin, 'team-a', 'team-a');
    const user = await addUser(g.server.db, g.server.bootstrap.organisationId, 'member', [
      { workspaceId: (await g.admin.get('/v1/workspaces/team-a')).body.id, role: 'admin' },
    ]);
    const key = await createWorkspaceKey(g.admin, {
      workspace_id: 'team-a',
      scopes: [...WORKSPACE_SCOPES],
      user_id: user,
    });
    const set = await g.admin.put('/v1/workspaces/team-a', {
      defaults: { input_guardrails: [{ 'default.contains': { operator: 'none', words: ['password'] }, deny: true }] },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);

    // Without a config, and with one of its own: the defaults run first either way.
    const bare = await send(g, null, chat('my password is hunter2'), { key: key.key });
    expect(bare.status, bare.text).toBe(446);
    const configured = await send(
      g,
      inline(g, { input_guardrails: [{ 'default.wordCount': { minWords: 1, maxWords: 50 } }] }),
      chat('my password is hunter2'),
      { key: key.key },
    );
    expect(configured.status, configured.text).toBe(446);
    expect(g.mock.requests).toHaveLength(0);
    const fine = await send(g, null, chat('hello there'), { key: key.key });
    expect(fine.status, fine.text).toBe(200);
    expect(fine.json.hook_results.before_request_hooks).toHaveLength(1);
    // Another workspace (the admin key's default one) is not affected.
    const other = await send(g, null, chat('my password is hunter2'));
    expect(other.status, other.text).toBe(200);
    expect(other.json.hook_results).toBeUndefined();
  });

  it('judges a cached answer with the output guardrails again', async () => {
    const g = await startGateway();
    const config = inline(g, {
      cache: { mode: 'simple', max_age: 600 },
      output_guardrails: [{ 'default.wordCount': { minWords: 1, maxWords: 2 } }],
    });
    const first = await send(g, config, chat('cache me'));
    expect(first.status, first.text).toBe(246);
    const hit = await send(g, config, chat('cache me'));
    expect(hit.headers.get('x-service-cache-status')).toBe('HIT');
    expect(hit.status, hit.text).toBe(246);
    expect(hit.json.hook_results.after_request_hooks[0].verdict).toBe(false);
    expect(g.mock.requests).toHaveLength(1);
  });

  it('refuses pass-through JSON routes when guardrails apply, and still serves bodiless ones', async () => {
    const g = await startGateway();
    const config = inline(g, { input_guardrails: [{ 'default.wordCount': { minWords: 1, maxWords: 50 } }] });
    const refused = await send(g, config, { input: 'hello' }, { path: '/v1/some/other/endpoint' });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.error.code).toBe('GUARDRAILS_UNSUPPORTED_ROUTE');
    expect(g.mock.requests).toHaveLength(0);
    const models = await send(g, config, null, { path: '/v1/models', method: 'GET' });
    expect(models.status, models.text).toBe(200);
    expect(models.json.object).toBe('list');
  });
});

describe('guardrails through the gateway: streams', () => {
  it('holds a stream for an output guardrail with deny and lets it through whole when it passes', async () => {
    const g = await startGateway();
    const config = inline(g, {
      output_guardrails: [{ 'default.contains': { operator: 'none', words: ['forbidden'] }, deny: true }],
    });
    const res = await send(g, config, chat('hello', { stream: true }));
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = res.text.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const verdict = JSON.parse(events.at(-2)!.slice('data: '.length));
    expect(verdict.hook_results.after_request_hooks[0]).toMatchObject({ verdict: true, deny: true });
    const text = events
      .slice(0, -2)
      .map((e) => JSON.parse(e.slice('data: '.length)).choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe(mockReply('hello'));
    const log = await logOf(g, res);
    expect(log.stream).toBe(true);
    expect(log.guardrail_verdict).toBe('passed');
  });

  it('denies a held stream whose text fails, and marks the stream as failed (246) when a guardrail without deny fails', async () => {
    const g = await startGateway();
    const denying = inline(g, {
      output_guardrails: [{ 'default.contains': { operator: 'none', words: ['mock'] }, deny: true }],
    });
    // The mock's stream says "Hello from mock: …".
    const denied = await send(g, denying, chat('hello', { stream: true }));
    expect(denied.status, denied.text).toBe(446);
    expect(denied.json.error.code).toBe('HOOKS_DENIED');
    expect(denied.text).not.toContain('Hello');

    const failing = inline(g, { input_guardrails: [{ 'default.wordCount': { minWords: 10, maxWords: 100 } }] });
    const flowed = await send(g, failing, chat('hello', { stream: true }));
    expect(flowed.status, flowed.text).toBe(246);
    expect(flowed.text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(flowed.text).toContain('"before_request_hooks":[{');
  });
});

describe('guardrails through the gateway: checks that reach the network', () => {
  it('refuses to fetch an image from a private host, and inlines it when the operator allows private content URLs', async () => {
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    let fetched = 0;
    const images = await listenOnLoopback(
      createServer((_req, res) => {
        fetched++;
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
      }),
    );
    onTestFinished(() => images.close());
    const body = chat([
      { type: 'text', text: 'what is this?' },
      { type: 'image_url', image_url: { url: `${images.url}/cat.png` } },
    ]);
    const guard = (g: GatewayHarness) =>
      inline(g, {
        input_guardrails: [{ 'default.inlineImageUrls': { failOnError: true, timeoutMs: 2000 }, deny: true }],
      });

    const strict = await startGateway();
    const refused = await send(strict, guard(strict), body);
    expect(refused.status, refused.text).toBe(446);
    const check = refused.json.hook_results.before_request_hooks[0].checks[0];
    expect(check.data.failed[0].url).toBe(`${images.url}/cat.png`);
    expect(check.error.message).toMatch(/private|loopback/i);
    expect(fetched).toBe(0);
    expect(strict.mock.requests).toHaveLength(0);

    const open = await startGateway({ env: { SVCGW_GUARDRAILS_ALLOW_PRIVATE_CONTENT_URLS: 'ON' } });
    const inlined = await send(open, guard(open), body);
    expect(inlined.status, inlined.text).toBe(200);
    expect(fetched).toBe(1);
    const sent = (open.mock.requests[0]!.json as any).messages[0].content[1];
    expect(sent.image_url.url).toBe(`data:image/png;base64,${png.toString('base64')}`);
  });

  it('never hangs on a webhook that does not answer: its timeout ends it and failOnError decides', async () => {
    let calls = 0;
    const silent = await listenOnLoopback(
      createServer(() => {
        calls++; // never answers
      }),
    );
    onTestFinished(() => silent.close());
    const g = await startGateway({ env: { SVCGW_GUARDRAILS_PRIVATE_HOSTS: new URL(silent.url).host } });
    const webhook = (failOnError: boolean) =>
      inline(g, {
        input_guardrails: [
          { 'default.webhook': { webhookURL: `${silent.url}/check`, timeout: 200, failOnError }, deny: true },
        ],
      });

    const lenient = await send(g, webhook(false), chat('hello'));
    expect(lenient.status, lenient.text).toBe(200);
    const passedCheck = lenient.json.hook_results.before_request_hooks[0].checks[0];
    expect(passedCheck.verdict).toBe(true);
    expect(passedCheck.error.message).toBeTruthy();
    expect(g.mock.requests).toHaveLength(1);

    const strict = await send(g, webhook(true), chat('hello'));
    expect(strict.status, strict.text).toBe(446);
    expect(strict.json.hook_results.before_request_hooks[0].checks[0]).toMatchObject({ verdict: false });
    expect(g.mock.requests).toHaveLength(1);
    expect(calls).toBe(2);
  });
});

describe('guardrails through the gateway: what the log and analytics keep', () => {
  it('logs the redacted request and answer, never what was redacted', async () => {
    const g = await startGateway({ env: { SVCGW_LOG_BODIES: 'ON' } });
    const answer = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Call +44 20 7946 0958 now', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
    };
    g.mock.behave(
      {
        kind: 'raw',
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify(answer)),
      },
      { times: 1 },
    );
    const config = inline(g, {
      input_guardrails: [{ 'default.pii': { redact: true } }],
      output_guardrails: [{ 'default.pii': { redact: true } }],
    });
    const res = await send(g, config, chat('I am jane.doe@example.com, card 4111 1111 1111 1111'));
    expect(res.status, res.text).toBe(200);
    expect(res.json.choices[0].message.content).toBe('Call [REDACTED_PHONE_NUMBER] now');
    expect(userText(g.mock.requests[0]!)).not.toContain('jane.doe@example.com');
    const log = await logOf(g, res);
    expect(log.request_body).not.toContain('jane.doe@example.com');
    expect(log.request_body).not.toContain('4111 1111 1111 1111');
    expect(log.request_body).toContain('[REDACTED_CREDIT_CARD]');
    expect(log.response_body).toContain('[REDACTED_PHONE_NUMBER]');
    expect(log.response_body).not.toContain('7946');
    expect(log.hook_results.before_request_hooks[0].checks[0].data).toEqual({
      found: { EMAIL_ADDRESS: 1, CREDIT_CARD: 1 },
      redacted: true,
    });

    // A redaction followed by a denial still keeps the redacted body, not the client's.
    const denying = inline(g, {
      input_guardrails: [
        { 'default.pii': { redact: true } },
        { 'default.wordCount': { minWords: 50, maxWords: 100 }, deny: true },
      ],
    });
    const denied = await send(g, denying, chat('I am jane.doe@example.com'));
    expect(denied.status, denied.text).toBe(446);
    expect((await logOf(g, denied)).request_body).not.toContain('jane.doe@example.com');
  });

  it('groups and filters analytics by guardrail verdict', async () => {
    const g = await startGateway();
    const deny = inline(g, {
      input_guardrails: [{ 'default.contains': { operator: 'none', words: ['x1'] }, deny: true }],
    });
    const warn = inline(g, { input_guardrails: [{ 'default.wordCount': { minWords: 5, maxWords: 9 } }] });
    expect((await send(g, deny, chat('x1 here'))).status).toBe(446);
    expect((await send(g, warn, chat('short'))).status).toBe(246);
    expect((await send(g, warn, chat('one two three four five six'))).status).toBe(200);
    expect((await send(g, null, chat('no guardrails'))).status).toBe(200);
    await g.logs(4);

    const groups = await g.admin.get('/v1/analytics/groups/guardrail_verdict');
    expect(groups.status, JSON.stringify(groups.body)).toBe(200);
    const pairs = Object.fromEntries(groups.body.data.map((row: any) => [row.guardrail_verdict, row.requests]));
    expect(pairs).toEqual({ denied: 1, failed: 1, passed: 1, null: 1 });
    const denied = await g.admin.get('/v1/analytics/groups/status_code?guardrail_verdict=denied');
    expect(denied.body.data.map((row: any) => [row.status_code, row.requests])).toEqual([[446, 1]]);
  });
});
