import { describe, expect, it } from 'vitest';
import { anthropicAdapter } from '../../src/providers/adapters/anthropic/index.js';
import type { StreamContext, StreamTranslator } from '../../src/providers/adapters/types.js';

const ctx = (includeUsage = false): StreamContext => ({
  model: 'claude-opus-4-1',
  includeUsage,
  id: 'chatcmpl-test',
  created: 1_700_000_000,
});

// "Basic streaming request" response of Anthropic's streaming guide, byte for byte.
const BASIC_STREAM = `event: message_start
data: {"type": "message_start", "message": {"id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY", "type": "message", "role": "assistant", "content": [], "model": "claude-opus-4-1-20250805", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}}

event: content_block_start
data: {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}

event: content_block_delta
data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "!"}}

event: content_block_stop
data: {"type": "content_block_stop", "index": 0}

event: message_delta
data: {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence":null}, "usage": {"output_tokens": 15}}

event: message_stop
data: {"type": "message_stop"}

`;

// "Streaming request with tool use" response of the same guide (text deltas shortened).
const TOOL_STREAM = `event: message_start
data: {"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-opus-4-1-20250805","stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2},"content":[],"stop_reason":null}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Okay"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", let's check the weather for San Francisco, CA:"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"location\\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \\"San"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" Francisc"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"o,"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" CA\\""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":", "}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\\"unit\\": \\"fah"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"renheit\\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}

event: message_stop
data: {"type":"message_stop"}

`;

// The error event example of the streaming guide.
const ERROR_EVENT = `event: error
data: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

`;

function run(text: string, translator: StreamTranslator, pieceSize = text.length): string[] {
  const bytes = Buffer.from(text);
  const out: string[] = [];
  for (let at = 0; at < bytes.length; at += pieceSize) out.push(...translator.push(bytes.subarray(at, at + pieceSize)));
  out.push(...translator.end());
  return out;
}

/** The JSON data of each event, and '[DONE]' as such. */
const payloads = (events: string[]) =>
  events.map((event) => {
    expect(event).toMatch(/^data: .*\n\n$/s);
    const data = event.slice('data: '.length, -2);
    return data === '[DONE]' ? data : JSON.parse(data);
  });

describe('anthropic stream translator', () => {
  it('turns the documented basic stream into chat.completion.chunk events and [DONE]', () => {
    const translator = anthropicAdapter.createStreamTranslator('chatComplete', ctx());
    const events = payloads(run(BASIC_STREAM, translator));
    const base = {
      id: 'chatcmpl-test',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'claude-opus-4-1-20250805',
    };
    expect(events).toEqual([
      {
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
      },
      { ...base, choices: [{ index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: '!' }, logprobs: null, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] },
      '[DONE]',
    ]);
    expect(translator.usage).toEqual({ promptTokens: 25, completionTokens: 15, cachedTokens: 0, totalTokens: 40 });
    expect(translator.error).toBeNull();
  });

  it('puts usage in a last chunk before [DONE] when include_usage was asked', () => {
    const events = payloads(run(BASIC_STREAM, anthropicAdapter.createStreamTranslator('chatComplete', ctx(true))));
    expect(events.at(-1)).toBe('[DONE]');
    expect(events.at(-2)).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [],
      usage: {
        prompt_tokens: 25,
        completion_tokens: 15,
        total_tokens: 40,
        prompt_tokens_details: { cached_tokens: 0 },
      },
    });
  });

  it('gives the same events whatever the chunk boundaries, and reads CRLF framing', () => {
    const whole = run(BASIC_STREAM, anthropicAdapter.createStreamTranslator('chatComplete', ctx()));
    expect(run(BASIC_STREAM, anthropicAdapter.createStreamTranslator('chatComplete', ctx()), 1)).toEqual(whole);
    expect(run(BASIC_STREAM, anthropicAdapter.createStreamTranslator('chatComplete', ctx()), 7)).toEqual(whole);
    expect(
      run(BASIC_STREAM.replace(/\n/g, '\r\n'), anthropicAdapter.createStreamTranslator('chatComplete', ctx()), 3),
    ).toEqual(whole);
  });

  it('keeps multi-byte characters cut between chunks whole', () => {
    const text = BASIC_STREAM.replace('"Hello"', '"Grüße 👋"');
    const events = payloads(run(text, anthropicAdapter.createStreamTranslator('chatComplete', ctx()), 1));
    expect(events[1].choices[0].delta.content).toBe('Grüße 👋');
  });

  it('streams tool_use blocks as tool_calls deltas whose arguments join into the input', () => {
    const translator = anthropicAdapter.createStreamTranslator('chatComplete', ctx());
    const events = payloads(run(TOOL_STREAM, translator));
    const deltas = events.filter((e) => e !== '[DONE]').map((e) => e.choices[0]);
    const text = deltas.map((c) => c.delta.content ?? '').join('');
    expect(text).toBe("Okay, let's check the weather for San Francisco, CA:");
    const toolDeltas = deltas.flatMap((c) => c.delta.tool_calls ?? []);
    expect(toolDeltas[0]).toEqual({
      index: 0,
      id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    });
    expect(toolDeltas.slice(1).every((d: any) => d.index === 0 && d.id === undefined)).toBe(true);
    expect(JSON.parse(toolDeltas.map((d: any) => d.function.arguments).join(''))).toEqual({
      location: 'San Francisco, CA',
      unit: 'fahrenheit',
    });
    expect(deltas.at(-1)).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
    expect(events.at(-1)).toBe('[DONE]');
    expect(translator.usage).toMatchObject({ promptTokens: 472, completionTokens: 89 });
  });

  it('turns an error event into an OpenAI error event, without [DONE], and stops there', () => {
    const beforeError = BASIC_STREAM.split('event: content_block_stop')[0]!;
    const translator = anthropicAdapter.createStreamTranslator('chatComplete', ctx(true));
    const raw = run(`${beforeError}${ERROR_EVENT}event: message_stop\ndata: {"type":"message_stop"}\n\n`, translator);
    const events = payloads(raw);
    expect(events.at(-1)).toEqual({
      error: { message: 'Overloaded', type: 'api_error', param: null, code: 'overloaded_error' },
    });
    expect(events).not.toContain('[DONE]');
    expect(translator.error).toEqual({ message: 'Overloaded', code: 'overloaded_error' });
    expect(translator.usage).toMatchObject({ promptTokens: 25 });
  });

  it('reports a stream that ends before message_stop as an error', () => {
    const translator = anthropicAdapter.createStreamTranslator('chatComplete', ctx());
    const events = payloads(run(BASIC_STREAM.split('event: message_delta')[0]!, translator));
    expect(events.at(-1)).toMatchObject({ error: { type: 'api_error', code: 'UPSTREAM_STREAM_ERROR' } });
    expect(events).not.toContain('[DONE]');
    expect(translator.error?.message).toMatch(/message_stop/);
  });

  it('streams legacy completions as text_completion chunks', () => {
    const translator = anthropicAdapter.createStreamTranslator('complete', ctx(true));
    const events = payloads(run(BASIC_STREAM, translator));
    const base = {
      id: 'chatcmpl-test',
      object: 'text_completion',
      created: 1_700_000_000,
      model: 'claude-opus-4-1-20250805',
    };
    expect(events).toEqual([
      { ...base, choices: [{ text: 'Hello', index: 0, logprobs: null, finish_reason: null }] },
      { ...base, choices: [{ text: '!', index: 0, logprobs: null, finish_reason: null }] },
      { ...base, choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }] },
      {
        ...base,
        choices: [],
        usage: {
          prompt_tokens: 25,
          completion_tokens: 15,
          total_tokens: 40,
          prompt_tokens_details: { cached_tokens: 0 },
        },
      },
      '[DONE]',
    ]);
  });

  it('counts prompt-cache tokens reported in message_start', () => {
    const cached = BASIC_STREAM.replace(
      '"usage": {"input_tokens": 25, "output_tokens": 1}',
      '"usage": {"input_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 20, "output_tokens": 1}',
    );
    const translator = anthropicAdapter.createStreamTranslator('chatComplete', ctx());
    run(cached, translator);
    expect(translator.usage).toEqual({ promptTokens: 25, completionTokens: 15, cachedTokens: 20, totalTokens: 40 });
  });
});
