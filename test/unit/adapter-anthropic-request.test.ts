import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.js';
import { anthropic, anthropicAdapter } from '../../src/providers/adapters/anthropic/index.js';
import { ANTHROPIC_PROVIDER } from '../../src/providers/adapters/anthropic/provider.js';
import type { AdapterContext } from '../../src/providers/adapters/types.js';
import { adapterFor } from '../../src/providers/registry.js';

const KEY = 'sk-ant-test-key';

function context(overrides: Partial<AdapterContext> = {}): AdapterContext {
  return {
    provider: ANTHROPIC_PROVIDER,
    target: { apiKey: KEY },
    options: {},
    headers: {},
    dispatcher: {} as Dispatcher,
    now: () => 0,
    ...overrides,
  };
}

async function translate(
  body: Record<string, unknown>,
  ctx = context(),
  endpoint: 'chatComplete' | 'complete' = 'chatComplete',
) {
  const request = await anthropicAdapter.buildRequest(endpoint, body, ctx);
  return { request, body: JSON.parse(String(request.body)) as Record<string, any> };
}

async function refusal(
  body: Record<string, unknown>,
  endpoint: 'chatComplete' | 'complete' = 'chatComplete',
): Promise<AppError> {
  const error = await anthropicAdapter.buildRequest(endpoint, body, context()).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe('INVALID_REQUEST');
  return error as AppError;
}

const user = (content: unknown) => ({ role: 'user', content });

describe('anthropic provider definition', () => {
  it('is registered with its adapter, versioned base, chat + completions and its native models list', () => {
    expect(anthropic.providers).toEqual([ANTHROPIC_PROVIDER]);
    expect(ANTHROPIC_PROVIDER).toMatchObject({
      name: 'anthropic',
      wireFormat: 'anthropic',
      baseUrl: 'https://api.anthropic.com/v1',
      auth: { kind: 'adapter', description: 'x-api-key header' },
    });
    expect([...ANTHROPIC_PROVIDER.endpoints].sort()).toEqual(['chatComplete', 'complete', 'listModels', 'proxy']);
    expect([...anthropicAdapter.endpoints].sort()).toEqual(['chatComplete', 'complete']);
    expect(adapterFor(ANTHROPIC_PROVIDER)).toBe(anthropicAdapter);
  });
});

describe('buildRequest: URL and headers', () => {
  it('posts to /v1/messages with x-api-key and the default anthropic-version', async () => {
    const { request } = await translate({ model: 'claude-sonnet-4-5', messages: [user('Hi')] });
    expect(request.url).toBe('https://api.anthropic.com/v1/messages');
    expect(request.method).toBe('POST');
    expect(request.headers).toEqual({
      'x-api-key': KEY,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    });
  });

  it('uses a custom host as the base: a bare origin gets /v1, a base with a path is kept', async () => {
    const bare = await translate(
      { model: 'm', messages: [user('Hi')] },
      context({ target: { apiKey: KEY, customHost: 'http://127.0.0.1:9' } }),
    );
    expect(bare.request.url).toBe('http://127.0.0.1:9/v1/messages');
    const withPath = await translate(
      { model: 'm', messages: [user('Hi')] },
      context({ target: { apiKey: KEY, customHost: 'https://proxy.example/anthropic/v1/' } }),
    );
    expect(withPath.request.url).toBe('https://proxy.example/anthropic/v1/messages');
  });

  it('refuses a custom host that is not an http(s) base URL', async () => {
    const error = await anthropicAdapter
      .buildRequest(
        'chatComplete',
        { model: 'm', messages: [user('Hi')] },
        context({ target: { apiKey: KEY, customHost: 'ftp://x' } }),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('PROVIDER_CONFIG');
  });

  it('joins the config option, the stored setting and the client header into one anthropic-beta', async () => {
    const ctx = context({
      options: { anthropicBeta: 'prompt-caching-2024-07-31, files-api-2025-04-14' },
      target: {
        apiKey: KEY,
        configurations: { anthropic_beta: 'files-api-2025-04-14', anthropic_version: '2023-01-01' },
      },
      headers: { 'x-service-anthropic-beta': 'token-efficient-tools-2025-02-19' },
    });
    const { request } = await translate({ model: 'm', messages: [user('Hi')] }, ctx);
    expect(request.headers['anthropic-beta']).toBe(
      'prompt-caching-2024-07-31,files-api-2025-04-14,token-efficient-tools-2025-02-19',
    );
    expect(request.headers['anthropic-version']).toBe('2023-01-01');
  });

  it('lets x-service-anthropic-version choose the API version, and sends no key header without a key', async () => {
    const { request } = await translate(
      { model: 'm', messages: [user('Hi')] },
      context({ target: { apiKey: null }, headers: { 'x-service-anthropic-version': '2024-01-01' } }),
    );
    expect(request.headers).toEqual({ 'anthropic-version': '2024-01-01', 'content-type': 'application/json' });
  });
});

describe('buildRequest: chat body', () => {
  it('moves system and developer messages to system and defaults max_tokens to 4096', async () => {
    const { body } = await translate({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        user('Hello'),
      ],
    });
    expect(body).toEqual({
      model: 'claude-sonnet-4-5',
      system: 'You are terse.\n\nAnswer in French.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      max_tokens: 4096,
    });
  });

  it('keeps system blocks as blocks when one carries cache_control', async () => {
    const { body } = await translate({
      model: 'm',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Long context', cache_control: { type: 'ephemeral' } }] },
        user('Hi'),
      ],
    });
    expect(body.system).toEqual([{ type: 'text', text: 'Long context', cache_control: { type: 'ephemeral' } }]);
  });

  it('maps the sampling parameters, stop and user, and drops those Anthropic lacks', async () => {
    const { body } = await translate({
      model: 'm',
      messages: [user('Hi')],
      max_completion_tokens: 100,
      max_tokens: 50,
      stop: 'END',
      temperature: 0.5,
      top_p: 0.9,
      stream: true,
      stream_options: { include_usage: true },
      user: 'user-42',
      seed: 7,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      logit_bias: { 1: 2 },
      n: 1,
      logprobs: false,
    });
    expect(body).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      max_tokens: 100,
      stop_sequences: ['END'],
      temperature: 0.5,
      top_p: 0.9,
      stream: true,
      metadata: { user_id: 'user-42' },
    });
    expect(
      (await translate({ model: 'm', messages: [user('Hi')], stop: ['a', 'b'], max_tokens: 10 })).body,
    ).toMatchObject({ stop_sequences: ['a', 'b'], max_tokens: 10 });
  });

  it('turns image_url parts into base64 and url image sources', async () => {
    const { body } = await translate({
      model: 'm',
      messages: [
        user([
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://upload.wikimedia.org/cat.jpg', detail: 'high' } },
          { type: 'text', text: 'Describe these.' },
        ]),
      ],
    });
    expect(body.messages[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://upload.wikimedia.org/cat.jpg' } },
      { type: 'text', text: 'Describe these.' },
    ]);
  });

  it('turns an inline PDF file part into a document block', async () => {
    const { body } = await translate({
      model: 'm',
      messages: [
        user([{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }]),
      ],
    });
    expect(body.messages[0].content).toEqual([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
    ]);
  });

  it('translates tools and every tool_choice form', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Get the current weather in a given location',
          parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        },
      },
      { type: 'function', function: { name: 'now' } },
    ];
    const base = { model: 'm', messages: [user('Weather?')], tools };
    const { body } = await translate(base);
    expect(body.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Get the current weather in a given location',
        input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(body.tool_choice).toBeUndefined();
    const choice = async (tool_choice: unknown, extra: Record<string, unknown> = {}) =>
      (await translate({ ...base, tool_choice, ...extra })).body.tool_choice;
    expect(await choice('auto')).toEqual({ type: 'auto' });
    expect(await choice('none')).toEqual({ type: 'none' });
    expect(await choice('required')).toEqual({ type: 'any' });
    expect(await choice({ type: 'function', function: { name: 'now' } })).toEqual({ type: 'tool', name: 'now' });
    expect(await choice('required', { parallel_tool_calls: false })).toEqual({
      type: 'any',
      disable_parallel_tool_use: true,
    });
    expect(await choice(undefined, { parallel_tool_calls: false })).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
  });

  it('round-trips assistant tool calls and tool results as tool_use and tool_result blocks in one user turn', async () => {
    const { body } = await translate({
      model: 'm',
      messages: [
        user('Weather in SF and NYC?'),
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            {
              id: 'toolu_01A',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' },
            },
            {
              id: 'toolu_01B',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"New York, NY"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_01A', content: '15 degrees' },
        { role: 'tool', tool_call_id: 'toolu_01B', content: [{ type: 'text', text: '20 degrees' }] },
        user('Which is warmer?'),
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in SF and NYC?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { location: 'San Francisco, CA' } },
          { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { location: 'New York, NY' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01A', content: '15 degrees' },
          { type: 'tool_result', tool_use_id: 'toolu_01B', content: [{ type: 'text', text: '20 degrees' }] },
          { type: 'text', text: 'Which is warmer?' },
        ],
      },
    ]);
  });

  it('refuses what Anthropic cannot answer as asked, naming the parameter', async () => {
    expect((await refusal({ model: 'm', messages: [user('Hi')], n: 2 })).param).toBe('n');
    expect((await refusal({ model: 'm', messages: [user('Hi')], logprobs: true })).param).toBe('logprobs');
    expect(
      (await refusal({ model: 'm', messages: [user('Hi')], response_format: { type: 'json_object' } })).param,
    ).toBe('response_format');
    expect(
      (
        await refusal({
          model: 'm',
          messages: [user([{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }])],
        })
      ).param,
    ).toBe('messages[0].content[0].type');
    expect(
      (await refusal({ model: 'm', messages: [user([{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }])] }))
        .param,
    ).toBe('messages[0].content[0].image_url.url');
    expect((await refusal({ model: 'm', messages: [{ role: 'function', name: 'f', content: 'x' }] })).param).toBe(
      'messages[0].role',
    );
    expect(
      (
        await refusal({
          model: 'm',
          messages: [
            {
              role: 'assistant',
              tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{oops' } }],
            },
          ],
        })
      ).param,
    ).toBe('messages[0].tool_calls[0].function.arguments');
    expect((await refusal({ model: 'm', messages: [user('Hi')], tools: [{ type: 'web_search' }] })).param).toBe(
      'tools[0]',
    );
  });
});

describe('buildRequest: legacy completions', () => {
  it('sends the prompt as the one user message', async () => {
    const { request, body } = await translate(
      { model: 'claude-haiku-4-5', prompt: 'Say hi', max_tokens: 20, stop: ['\n'], stream: true },
      context(),
      'complete',
    );
    expect(request.url).toBe('https://api.anthropic.com/v1/messages');
    expect(body).toEqual({
      model: 'claude-haiku-4-5',
      messages: [{ role: 'user', content: 'Say hi' }],
      max_tokens: 20,
      stop_sequences: ['\n'],
      stream: true,
    });
    expect((await translate({ model: 'm', prompt: ['One'] }, context(), 'complete')).body.messages).toEqual([
      { role: 'user', content: 'One' },
    ]);
  });

  it('refuses several prompts, token prompts, echo and suffix', async () => {
    expect((await refusal({ model: 'm', prompt: ['a', 'b'] }, 'complete')).param).toBe('prompt');
    expect((await refusal({ model: 'm', prompt: [1, 2, 3] }, 'complete')).param).toBe('prompt');
    expect((await refusal({ model: 'm', prompt: 'x', echo: true }, 'complete')).param).toBe('echo');
    expect((await refusal({ model: 'm', prompt: 'x', suffix: 'y' }, 'complete')).param).toBe('suffix');
  });
});

describe('passThrough', () => {
  it('targets the native path with x-api-key and keeps the client’s anthropic-version and betas', async () => {
    const ctx = context({
      headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'files-api-2025-04-14' },
      options: { anthropicBeta: 'prompt-caching-2024-07-31' },
    });
    const request = await anthropicAdapter.passThrough!('/messages/count_tokens?beta=true', 'post', ctx);
    expect(request).toEqual({
      url: 'https://api.anthropic.com/v1/messages/count_tokens?beta=true',
      method: 'POST',
      headers: {
        'x-api-key': KEY,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'prompt-caching-2024-07-31,files-api-2025-04-14',
      },
      body: null,
    });
  });

  it('adds the default anthropic-version when the client sent none, and refuses dot segments', async () => {
    const request = await anthropicAdapter.passThrough!(
      '/models',
      'GET',
      context({ target: { apiKey: KEY, customHost: 'http://127.0.0.1:9' } }),
    );
    expect(request).toMatchObject({
      url: 'http://127.0.0.1:9/v1/models',
      method: 'GET',
      headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' },
    });
    const error = await anthropicAdapter.passThrough!('/../admin', 'GET', context()).catch((e: unknown) => e);
    expect((error as AppError).code).toBe('INVALID_REQUEST');
  });
});
