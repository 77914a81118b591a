import { beforeAll, describe, expect, it } from 'vitest';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { loadEventStreamCodec } from '../../src/providers/adapters/bedrock/event-stream.js';
import { bedrock } from '../../src/providers/adapters/bedrock/index.js';
import type { StreamContext } from '../../src/providers/adapters/types.js';

const adapter = bedrock.adapter!;
// The gateway loads the codec when it sends a ConverseStream request; here the translator runs alone.
beforeAll(loadEventStreamCodec);
const codec = new EventStreamCodec(
  (b) => Buffer.from(b).toString('utf8'),
  (s) => new Uint8Array(Buffer.from(s, 'utf8')),
);
const ctx: StreamContext = {
  model: 'amazon.nova-lite-v1:0',
  includeUsage: true,
  id: 'chatcmpl-s',
  created: 1700000000,
};

function frame(type: string, payload: unknown, messageType: 'event' | 'exception' = 'event'): Buffer {
  return Buffer.from(
    codec.encode({
      headers: {
        [messageType === 'event' ? ':event-type' : ':exception-type']: { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: messageType },
      },
      body: new Uint8Array(Buffer.from(JSON.stringify(payload))),
    }),
  );
}

const parse = (events: string[]) => events.map((e) => (e === 'data: [DONE]\n\n' ? '[DONE]' : JSON.parse(e.slice(6))));

// The documented ConverseStream event order: messageStart, content blocks, messageStop, metadata.
const TEXT_STREAM = [
  frame('messageStart', { role: 'assistant', p: 'abcd' }),
  frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } }),
  frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' there' } }),
  frame('contentBlockStop', { contentBlockIndex: 0 }),
  frame('messageStop', { stopReason: 'end_turn' }),
  frame('metadata', { usage: { inputTokens: 8, outputTokens: 2, totalTokens: 10 }, metrics: { latencyMs: 310 } }),
];

describe('ConverseStream → chat.completion.chunk', () => {
  it('translates a text stream cut at arbitrary byte boundaries, usage last, then [DONE]', () => {
    const bytes = Buffer.concat(TEXT_STREAM);
    const translator = adapter.createStreamTranslator('chatComplete', ctx);
    const events: string[] = [];
    for (let at = 0; at < bytes.length; at += 13) events.push(...translator.push(bytes.subarray(at, at + 13)));
    events.push(...translator.end());
    const chunks = parse(events);
    expect(chunks.map((c: any) => (c === '[DONE]' ? c : (c.choices[0]?.delta ?? 'usage')))).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Hello' },
      { content: ' there' },
      {},
      'usage',
      '[DONE]',
    ]);
    expect(chunks[3]).toMatchObject({
      id: 'chatcmpl-s',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'amazon.nova-lite-v1:0',
      choices: [{ index: 0, finish_reason: 'stop' }],
    });
    expect(chunks[4]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 },
    });
    expect(translator.usage).toEqual({ promptTokens: 8, completionTokens: 2, cachedTokens: null, totalTokens: 10 });
    expect(translator.error).toBeNull();
  });

  it('keeps usage for the log but sends no usage chunk unless asked', () => {
    const translator = adapter.createStreamTranslator('chatComplete', { ...ctx, includeUsage: false });
    const chunks = parse([...translator.push(Buffer.concat(TEXT_STREAM)), ...translator.end()]);
    expect(chunks.some((c: any) => c !== '[DONE]' && c.usage)).toBe(false);
    expect(translator.usage?.totalTokens).toBe(10);
  });

  it('streams a tool call: id and name first, then argument fragments', () => {
    const translator = adapter.createStreamTranslator('chatComplete', ctx);
    const chunks = parse([
      ...translator.push(
        Buffer.concat([
          frame('messageStart', { role: 'assistant' }),
          frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Let me check.' } }),
          frame('contentBlockStop', { contentBlockIndex: 0 }),
          frame('contentBlockStart', {
            contentBlockIndex: 1,
            start: { toolUse: { toolUseId: 'tooluse_abc', name: 'top_song' } },
          }),
          frame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"sign":' } } }),
          frame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"WZPZ"}' } } }),
          frame('contentBlockStop', { contentBlockIndex: 1 }),
          frame('messageStop', { stopReason: 'tool_use' }),
          frame('metadata', { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }),
        ]),
      ),
      ...translator.end(),
    ]);
    const deltas = chunks
      .filter((c: any) => c !== '[DONE]' && c.choices.length > 0)
      .map((c: any) => c.choices[0].delta);
    expect(deltas.slice(2, 5)).toEqual([
      {
        tool_calls: [{ index: 0, id: 'tooluse_abc', type: 'function', function: { name: 'top_song', arguments: '' } }],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{"sign":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"WZPZ"}' } }] },
    ]);
    expect(chunks.find((c: any) => c !== '[DONE]' && c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe(
      'tool_calls',
    );
  });

  it('ends with an error event and no [DONE] on an exception frame', () => {
    const translator = adapter.createStreamTranslator('chatComplete', ctx);
    const events = [
      ...translator.push(
        Buffer.concat([
          TEXT_STREAM[0]!,
          TEXT_STREAM[1]!,
          frame(
            'modelStreamErrorException',
            { message: 'The model stream failed.', originalStatusCode: 500 },
            'exception',
          ),
          TEXT_STREAM[2]!,
        ]),
      ),
      ...translator.push(TEXT_STREAM[4]!),
      ...translator.end(),
    ];
    const chunks = parse(events);
    expect(chunks.at(-1)).toEqual({
      error: { message: 'The model stream failed.', type: 'api_error', param: null, code: 'ModelStreamErrorException' },
    });
    expect(chunks).not.toContain('[DONE]');
    expect(translator.error).toEqual({ message: 'The model stream failed.', code: 'ModelStreamErrorException' });
    const throttled = adapter.createStreamTranslator('chatComplete', ctx);
    const [event] = throttled.push(frame('throttlingException', { message: 'Too many tokens' }, 'exception'));
    expect(JSON.parse(event!.slice(6)).error).toMatchObject({ type: 'rate_limit_error', code: 'ThrottlingException' });
  });

  it('reports a stream cut inside a frame, or before messageStop, as an error', () => {
    const cut = adapter.createStreamTranslator('chatComplete', ctx);
    cut.push(Buffer.concat([TEXT_STREAM[0]!, TEXT_STREAM[1]!.subarray(0, 10)]));
    expect(parse(cut.end())[0].error.code).toBe('UPSTREAM_STREAM_ERROR');
    const early = adapter.createStreamTranslator('chatComplete', ctx);
    early.push(Buffer.concat(TEXT_STREAM.slice(0, 2)));
    expect(early.end()).toHaveLength(1);
    expect(early.error).not.toBeNull();
  });

  it('refuses bytes that fail the CRC check', () => {
    const bad = Buffer.from(TEXT_STREAM[1]!);
    bad[bad.length - 6] = bad[bad.length - 6]! ^ 0xff;
    const translator = adapter.createStreamTranslator('chatComplete', ctx);
    expect(parse(translator.push(bad))[0].error.message).toMatch(/could not be decoded/);
    expect(translator.end()).toEqual([]);
  });
});
