import { describe, expect, it } from 'vitest';
import { anthropicAdapter } from '../../src/providers/adapters/anthropic/index.js';
import { finishReason } from '../../src/providers/adapters/anthropic/usage-and-finish.js';
import type { StreamContext } from '../../src/providers/adapters/types.js';

const ctx: StreamContext = {
  model: 'claude-opus-4-1',
  includeUsage: false,
  id: 'chatcmpl-test',
  created: 1_700_000_000,
};

// The "basic message" response of the Messages API reference, with prompt-cache counts added.
const BASIC_MESSAGE = {
  id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
  type: 'message',
  role: 'assistant',
  content: [{ type: 'text', text: 'Hi! My name is Claude.' }],
  model: 'claude-opus-4-1-20250805',
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 2095, output_tokens: 503, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000 },
};

// The tool-use response of the tool-use guide (a text block, then a tool_use block).
const TOOL_USE_MESSAGE = {
  id: 'msg_01Aq9w938a90dw8q',
  type: 'message',
  model: 'claude-opus-4-1-20250805',
  stop_reason: 'tool_use',
  role: 'assistant',
  content: [
    { type: 'text', text: "I'll check the current weather in San Francisco for you." },
    {
      type: 'tool_use',
      id: 'toolu_01A09q90qw90lq917835lq9',
      name: 'get_weather',
      input: { location: 'San Francisco, CA', unit: 'celsius' },
    },
  ],
  usage: { input_tokens: 384, output_tokens: 92 },
};

describe('toOpenAIResponse', () => {
  it('turns a text message into a chat.completion, counting cache tokens as prompt tokens', () => {
    const { body, usage } = anthropicAdapter.toOpenAIResponse('chatComplete', BASIC_MESSAGE, ctx);
    expect(body).toEqual({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'claude-opus-4-1-20250805',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hi! My name is Claude.', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 3195,
        completion_tokens: 503,
        total_tokens: 3698,
        prompt_tokens_details: { cached_tokens: 1000 },
      },
    });
    expect(usage).toEqual({ promptTokens: 3195, completionTokens: 503, cachedTokens: 1000, totalTokens: 3698 });
  });

  it('turns tool_use blocks into tool_calls with JSON-string arguments', () => {
    const { body, usage } = anthropicAdapter.toOpenAIResponse('chatComplete', TOOL_USE_MESSAGE, ctx);
    const choice = (body.choices as any[])[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe("I'll check the current weather in San Francisco for you.");
    expect(choice.message.tool_calls).toEqual([
      {
        id: 'toolu_01A09q90qw90lq917835lq9',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
      },
    ]);
    expect(usage).toEqual({ promptTokens: 384, completionTokens: 92, cachedTokens: 0, totalTokens: 476 });
  });

  it('gives null content when a message holds tool calls only, and skips thinking blocks', () => {
    const message = {
      ...TOOL_USE_MESSAGE,
      content: [{ type: 'thinking', thinking: '…', signature: 'x' }, TOOL_USE_MESSAGE.content[1]],
    };
    const choice = (anthropicAdapter.toOpenAIResponse('chatComplete', message, ctx).body.choices as any[])[0];
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
  });

  it('turns a message into a legacy text_completion', () => {
    const { body } = anthropicAdapter.toOpenAIResponse(
      'complete',
      { ...BASIC_MESSAGE, stop_reason: 'max_tokens' },
      ctx,
    );
    expect(body).toMatchObject({
      object: 'text_completion',
      choices: [{ text: 'Hi! My name is Claude.', index: 0, logprobs: null, finish_reason: 'length' }],
      usage: { prompt_tokens: 3195 },
    });
  });

  it('maps every documented stop_reason', () => {
    expect(
      [
        'end_turn',
        'stop_sequence',
        'pause_turn',
        'max_tokens',
        'model_context_window_exceeded',
        'tool_use',
        'refusal',
        null,
      ].map(finishReason),
    ).toEqual(['stop', 'stop', 'stop', 'length', 'length', 'tool_calls', 'content_filter', null]);
  });
});

describe('toOpenAIError', () => {
  const error = (status: number, body: unknown) =>
    anthropicAdapter.toOpenAIError(status, Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)));

  it('keeps the status and message, maps the type and keeps Anthropic’s type as the code', () => {
    expect(
      error(529, {
        type: 'error',
        error: { type: 'overloaded_error', message: 'Overloaded' },
        request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy',
      }),
    ).toEqual({ status: 529, message: 'Overloaded', type: 'api_error', code: 'overloaded_error' });
    expect(
      error(400, {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'messages: roles must alternate between "user" and "assistant"',
        },
      }),
    ).toEqual({
      status: 400,
      message: 'messages: roles must alternate between "user" and "assistant"',
      type: 'invalid_request_error',
      code: 'invalid_request_error',
    });
    expect(
      error(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }),
    ).toMatchObject({ type: 'authentication_error', code: 'authentication_error' });
    expect(
      error(429, {
        type: 'error',
        error: {
          type: 'rate_limit_error',
          message: 'Number of request tokens has exceeded your per-minute rate limit',
        },
      }),
    ).toMatchObject({ type: 'rate_limit_error' });
    expect(
      error(413, {
        type: 'error',
        error: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
      }),
    ).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
  });

  it('falls back on the status for bodies that are not Anthropic errors', () => {
    expect(error(502, '<html>Bad gateway</html>')).toEqual({
      status: 502,
      message: 'The provider answered with HTTP 502: <html>Bad gateway</html>',
      type: 'api_error',
      code: undefined,
    });
    expect(error(404, { detail: 'x' })).toEqual({
      status: 404,
      message: 'The provider answered with HTTP 404.',
      type: 'not_found_error',
      code: undefined,
    });
  });
});
