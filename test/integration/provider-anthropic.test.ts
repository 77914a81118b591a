import OpenAI from 'openai';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import {
  MOCK_TOOL_PREFACE,
  mockAnthropicReply,
  startMockAnthropic,
  type MockAnthropicOptions,
} from '../helpers/mock-anthropic-upstream.js';

const ANTHROPIC_KEY = 'sk-ant-api03-test-key-0123456789';
const MODEL = 'claude-sonnet-4-5';

async function setup(options: MockAnthropicOptions = {}) {
  const g = await startGateway();
  const mock = await startMockAnthropic({ apiKey: ANTHROPIC_KEY, ...options });
  onTestFinished(() => mock.close());
  const headers = { 'x-service-provider': 'anthropic', 'x-service-custom-host': mock.url };
  const claude = g.openai(headers, { apiKey: ANTHROPIC_KEY });
  /** A raw request through the gateway, for what the openai client does not show (framing, native routes). */
  const raw = (path: string, body: unknown, extra: Record<string, string> = {}) =>
    fetch(`${g.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-api-key': g.adminKey,
        authorization: `Bearer ${ANTHROPIC_KEY}`,
        ...headers,
        ...extra,
      },
      body: JSON.stringify(body),
    });
  return { g, mock, claude, raw };
}

describe('anthropic provider through the gateway', () => {
  it('answers a chat completion from a Messages call, and logs its usage', async () => {
    const { g, mock, claude } = await setup({ cacheReadTokens: 3 });
    const completion = await claude.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello Claude' },
      ],
      temperature: 0.2,
      stop: ['###'],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0]!.message.content).toBe(mockAnthropicReply('Hello Claude'));
    expect(completion.choices[0]!.finish_reason).toBe('stop');

    const sent = mock.requests[0]!;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.headers['anthropic-beta']).toBeUndefined();
    expect(sent.json).toEqual({
      model: MODEL,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello Claude' }] }],
      max_tokens: 4096,
      stop_sequences: ['###'],
      temperature: 0.2,
    });

    const usage = completion.usage!;
    expect(usage.prompt_tokens_details?.cached_tokens).toBe(3);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    const [log] = await g.logs(1);
    expect(log).toMatchObject({
      provider: 'anthropic',
      status_code: 200,
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      cached_tokens: 3,
    });
    expect(g.logLines.join('\n')).not.toContain(ANTHROPIC_KEY);
  });

  it('streams chunks with usage in the last one, ending with [DONE]', async () => {
    const { g, claude, raw } = await setup();
    const stream = await claude.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Stream please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(mockAnthropicReply('Stream please'));
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)!.choices).toEqual([]);
    const usage = chunks.at(-1)!.usage!;
    expect(usage.completion_tokens).toBe(mockAnthropicReply('Stream please').split(' ').length);

    const text = await (
      await raw('/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'Again' }], stream: true })
    ).text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).not.toContain('"usage"');
    const logs = await g.logs(2);
    expect(logs.every((l: any) => l.stream === true && l.is_success === true && l.provider === 'anthropic')).toBe(true);
    expect(
      logs.find((l: any) => l.completion_tokens === usage.completion_tokens && l.prompt_tokens === usage.prompt_tokens),
    ).toBeDefined();
  });

  it('round-trips a tool call: tool_use becomes tool_calls, the tool result goes back as tool_result', async () => {
    const { mock, claude } = await setup();
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather',
          parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        },
      },
    ];
    const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'Weather in San Francisco?' };
    const first = await claude.chat.completions.create({
      model: MODEL,
      messages: [question],
      tools,
      tool_choice: 'required',
    });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe(MOCK_TOOL_PREFACE);
    const call = choice.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.id).toMatch(/^toolu_/);
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ location: 'San Francisco, CA' });
    expect(mock.requests[0]!.json).toMatchObject({
      tools: [
        {
          name: 'get_weather',
          description: 'Current weather',
          input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        },
      ],
      tool_choice: { type: 'any' },
    });

    const second = await claude.chat.completions.create({
      model: MODEL,
      tools,
      messages: [question, choice.message, { role: 'tool', tool_call_id: call.id, content: '18°C and sunny' }],
    });
    expect(second.choices[0]!.message.content).toBe('Tool said: 18°C and sunny');
    expect(mock.requests[1]!.json!.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in San Francisco?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: MOCK_TOOL_PREFACE },
          { type: 'tool_use', id: call.id, name: 'get_weather', input: { location: 'San Francisco, CA' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18°C and sunny' }] },
    ]);
  });

  it('streams a tool call as tool_calls deltas', async () => {
    const { claude } = await setup();
    const stream = await claude.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: { type: 'object', properties: { location: { type: 'string' } } },
          },
        },
      ],
      stream: true,
    });
    const deltas = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      deltas.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(deltas.map((d) => d.function?.arguments ?? '').join(''))).toEqual({
      location: 'San Francisco, CA',
    });
    expect(finish).toBe('tool_calls');
  });

  it('sends image parts as base64 and url image sources', async () => {
    const { mock, claude } = await setup();
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    await claude.chat.completions.create({
      model: MODEL,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    });
    expect(mock.requests[0]!.json!.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
  });

  it('answers a legacy completion through Messages', async () => {
    const { mock, claude } = await setup();
    const completion = await claude.completions.create({ model: MODEL, prompt: 'Say hello', max_tokens: 3 });
    expect(completion.object).toBe('text_completion');
    expect(completion.choices[0]).toMatchObject({
      text: mockAnthropicReply('Say hello').split(' ').slice(0, 3).join(' '),
      finish_reason: 'length',
    });
    expect(mock.requests[0]!.json).toEqual({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say hello' }],
      max_tokens: 3,
    });
  });

  it('passes provider errors on with their status and message, and the type mapped', async () => {
    const { g, mock, claude } = await setup();
    mock.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, { times: 1 });
    const overloaded = await claude.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(OpenAI.APIError);
    expect(overloaded).toMatchObject({
      status: 529,
      message: expect.stringContaining('Overloaded'),
      type: 'api_error',
      code: 'overloaded_error',
    });

    mock.behave(
      {
        kind: 'error',
        status: 400,
        type: 'invalid_request_error',
        message: 'messages: roles must alternate between "user" and "assistant"',
      },
      { times: 1 },
    );
    const invalid = await claude.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(OpenAI.BadRequestError);
    expect(invalid).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'invalid_request_error' });
    expect((invalid as Error).message).toContain('roles must alternate');

    const wrongKey = g.openai(
      { 'x-service-provider': 'anthropic', 'x-service-custom-host': mock.url },
      { apiKey: 'sk-ant-wrong' },
    );
    const unauthenticated = await wrongKey.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(unauthenticated).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(unauthenticated).toMatchObject({ status: 401, message: expect.stringContaining('invalid x-api-key') });

    const logs = await g.logs(3);
    expect(logs.map((l: any) => [l.status_code, l.error_code]).sort()).toEqual([
      [400, 'UPSTREAM_ERROR'],
      [401, 'UPSTREAM_ERROR'],
      [529, 'UPSTREAM_ERROR'],
    ]);
  });

  it('refuses what it cannot translate before calling Anthropic', async () => {
    const { mock, claude } = await setup();
    const error = await claude.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], n: 2 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, param: 'n' });
    expect(mock.requests).toHaveLength(0);
  });

  it('ends the stream with an error event, not [DONE], when Anthropic sends an error event, and logs the request as failed', async () => {
    const { g, mock, claude, raw } = await setup();
    mock.behave({ kind: 'stream-error', afterDeltas: 2, type: 'overloaded_error', message: 'Overloaded' });
    const stream = await claude.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello there' }],
      stream: true,
    });
    const received: string[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as Error).message).toContain('Overloaded');
    expect(received.join('')).toBe(mockAnthropicReply('Hello there').split(/(?= )/).slice(0, 2).join(''));

    const text = await (
      await raw('/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true })
    ).text();
    expect(text).not.toContain('[DONE]');
    expect(text.trimEnd().split('\n\n').at(-1)).toBe(
      `data: ${JSON.stringify({ error: { message: 'Overloaded', type: 'api_error', param: null, code: 'overloaded_error' } })}`,
    );

    const logs = await g.logs(2);
    expect(logs.every((l: any) => l.is_success === false && l.stream === true)).toBe(true);
    expect(logs.map((l: any) => l.error_code)).toEqual(['UPSTREAM_STREAM_ERROR', 'UPSTREAM_STREAM_ERROR']);
    expect(logs[0].error_message).toBe('Overloaded');
  });

  it('sends the anthropic-beta of x-service-anthropic-beta', async () => {
    const { mock, raw } = await setup();
    await raw(
      '/v1/chat/completions',
      { model: MODEL, messages: [{ role: 'user', content: 'Hi' }] },
      { 'x-service-anthropic-beta': 'token-efficient-tools-2025-02-19' },
    );
    expect(mock.requests[0]!.headers['anthropic-beta']).toBe('token-efficient-tools-2025-02-19');
  });

  it('uses a stored provider: its key, custom host, anthropic_version and anthropic_beta', async () => {
    const { g, mock } = await setup();
    const created = await g.admin.post('/v1/integrations', {
      name: 'Claude',
      slug: 'my-claude',
      ai_provider_id: 'anthropic',
      key: ANTHROPIC_KEY,
      configurations: {
        custom_host: mock.url,
        anthropic_version: '2023-06-01',
        anthropic_beta: 'prompt-caching-2024-07-31',
      },
    });
    expect(created.status).toBe(200);
    const stored = g.openai(
      { 'x-service-provider': '@my-claude', 'x-service-anthropic-beta': 'files-api-2025-04-14' },
      { apiKey: 'ignored' },
    );
    const completion = await stored.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Stored hello' }],
    });
    expect(completion.choices[0]!.message.content).toBe(mockAnthropicReply('Stored hello'));
    const sent = mock.requests[0]!;
    expect(sent.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31,files-api-2025-04-14');
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ provider: 'anthropic', credential_source: 'provider:my-claude', status_code: 200 });
    expect(g.logLines.join('\n')).not.toContain(ANTHROPIC_KEY);
  });

  it('takes anthropic_beta from the gateway config', async () => {
    const { g, mock } = await setup();
    const config = {
      provider: 'anthropic',
      api_key: ANTHROPIC_KEY,
      custom_host: mock.url,
      anthropic_beta: 'output-128k-2025-02-19',
    };
    const viaConfig = g.openai({ 'x-service-config': JSON.stringify(config) }, { apiKey: 'ignored' });
    await viaConfig.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] });
    expect(mock.requests[0]!.headers['anthropic-beta']).toBe('output-128k-2025-02-19');
    expect(mock.requests[0]!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
  });

  it('passes native /v1/messages calls through with x-api-key, JSON and streamed', async () => {
    const { g, mock, raw } = await setup();
    const native = { model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'Native hello' }] };
    const res = await raw('/v1/messages', native);
    expect(res.status).toBe(200);
    const message = await res.json();
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: mockAnthropicReply('Native hello') }],
      stop_reason: 'end_turn',
    });
    const sent = mock.requests[0]!;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.json).toEqual(native);

    const streamed = await raw(
      '/v1/messages',
      { ...native, stream: true },
      { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'files-api-2025-04-14' },
    );
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    const text = await streamed.text();
    expect(text.startsWith('event: message_start\ndata: ')).toBe(true);
    expect(text.trimEnd().endsWith('event: message_stop\ndata: {"type":"message_stop"}')).toBe(true);
    expect(mock.requests[1]!.headers['anthropic-beta']).toBe('files-api-2025-04-14');

    const error = await raw('/v1/messages', { max_tokens: 5, messages: [] });
    expect(error.status).toBe(400);
    expect(await error.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'model: Field required' },
    });
    const logs = await g.logs(3);
    expect(logs.every((l: any) => l.provider === 'anthropic' && l.endpoint_type === 'proxy')).toBe(true);
    // Native chat answers are read on the way: tokens, model and cost, for JSON and for streams.
    const [failed, streamedLog, plainLog] = logs;
    for (const log of [plainLog, streamedLog]) {
      expect(log).toMatchObject({ model: MODEL, is_success: true });
      expect(log.prompt_tokens).toBeGreaterThan(0);
      expect(log.completion_tokens).toBeGreaterThan(0);
      expect(log.cost).toBeGreaterThan(0);
    }
    expect(streamedLog.prompt_tokens).toBe(plainLog.prompt_tokens);
    expect(failed.prompt_tokens).toBeNull();
  });
});
