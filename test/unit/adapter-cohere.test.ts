import { describe, expect, it } from 'vitest';
import { cohere } from '../../src/providers/adapters/cohere/index.js';
import type { AdapterContext, StreamContext } from '../../src/providers/adapters/types.js';

const adapter = cohere.adapter!;
const provider = cohere.providers[0]!;
const stream: StreamContext = {
  model: 'command-a-03-2025',
  includeUsage: true,
  id: 'chatcmpl-1',
  created: 1_700_000_000,
};

function ctx(target: Partial<AdapterContext['target']> = {}): AdapterContext {
  return {
    provider,
    target: { apiKey: 'co-key', ...target },
    options: {},
    headers: {},
    dispatcher: undefined as never,
    now: () => 0,
  };
}

async function built(
  body: Record<string, unknown>,
  endpoint: 'chatComplete' | 'embed' | 'rerank' = 'chatComplete',
  target = {},
) {
  const request = await adapter.buildRequest(endpoint, body, ctx(target));
  return { request, json: JSON.parse(String(request.body)) };
}

const sse = (type: string, body: Record<string, unknown> = {}) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
const usage = { billed_units: { input_tokens: 10, output_tokens: 4 }, tokens: { input_tokens: 200, output_tokens: 6 } };

describe('cohere provider definition', () => {
  it('is cohere, on its own wire format, serving chat, embeddings and rerank', () => {
    expect(provider).toMatchObject({ name: 'cohere', wireFormat: 'cohere', baseUrl: 'https://api.cohere.com/v2' });
    expect([...provider.endpoints].sort()).toEqual(['chatComplete', 'embed', 'proxy', 'rerank']);
  });
});

describe('cohere chat request', () => {
  it('posts to /v2/chat with the bearer key, and a custom host as the base', async () => {
    expect((await built({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).request).toMatchObject({
      url: 'https://api.cohere.com/v2/chat',
      method: 'POST',
      headers: { authorization: 'Bearer co-key', 'content-type': 'application/json' },
    });
    expect(
      (
        await built({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, 'chatComplete', {
          customHost: 'http://127.0.0.1:9',
        })
      ).request.url,
    ).toBe('http://127.0.0.1:9/v2/chat');
    expect(
      (
        await built({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, 'chatComplete', {
          customHost: 'https://proxy.example/cohere/v2/',
        })
      ).request.url,
    ).toBe('https://proxy.example/cohere/v2/chat');
  });

  it('maps roles, images and sampling fields', async () => {
    const { json } = await built({
      model: 'command-a-vision-07-2025',
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Rules.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAA', detail: 'low' } },
          ],
        },
      ],
      max_completion_tokens: 50,
      top_p: 0.5,
      stop: 'END',
      seed: 7,
      frequency_penalty: 0.1,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
    });
    expect(json).toEqual({
      model: 'command-a-vision-07-2025',
      messages: [
        { role: 'system', content: 'Rules.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAA', detail: 'low' } },
          ],
        },
      ],
      max_tokens: 50,
      p: 0.5,
      stop_sequences: ['END'],
      seed: 7,
      frequency_penalty: 0.1,
      response_format: { type: 'json_object', json_schema: { type: 'object' } },
    });
  });

  it('keeps tool call ids on assistant turns and tool results, and turns tool_choice into REQUIRED/NONE', async () => {
    const tools = [
      { type: 'function', function: { name: 'a', parameters: { type: 'object', properties: {} } } },
      { type: 'function', function: { name: 'b', description: 'B', parameters: { type: 'object', properties: {} } } },
    ];
    const { json } = await built({
      model: 'm',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: 'Calling a.',
          tool_calls: [{ id: 'a_1', type: 'function', function: { name: 'a', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'a_1', content: [{ type: 'text', text: '{"ok":true}' }] },
      ],
      tools,
      tool_choice: { type: 'function', function: { name: 'b' } },
    });
    expect(json.messages[1]).toEqual({
      role: 'assistant',
      tool_plan: 'Calling a.',
      tool_calls: [{ id: 'a_1', type: 'function', function: { name: 'a', arguments: '{}' } }],
    });
    expect(json.messages[2]).toEqual({
      role: 'tool',
      tool_call_id: 'a_1',
      content: [{ type: 'text', text: '{"ok":true}' }],
    });
    expect(json.tools).toEqual([tools[1]]);
    expect(json.tool_choice).toBe('REQUIRED');
    expect(
      (await built({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'none' })).json
        .tool_choice,
    ).toBe('NONE');
    expect(
      (await built({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'auto' })).json
        .tool_choice,
    ).toBeUndefined();
  });

  it('refuses what Cohere cannot do, naming the field', async () => {
    await expect(built({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      param: 'model',
    });
    await expect(built({ model: 'm', messages: [{ role: 'user', content: 'x' }], n: 2 })).rejects.toMatchObject({
      param: 'n',
    });
    await expect(
      built({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }),
    ).rejects.toMatchObject({ param: 'messages[0].content[0].type' });
    await expect(built({ model: 'm', messages: [{ role: 'tool', content: 'x' }] })).rejects.toMatchObject({
      param: 'messages[0].tool_call_id',
    });
    await expect(
      built({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: 'a' } }],
        tool_choice: { type: 'function', function: { name: 'zzz' } },
      }),
    ).rejects.toMatchObject({ param: 'tool_choice' });
  });
});

describe('cohere chat response', () => {
  it('text, finish reason and billed usage', () => {
    const out = adapter.toOpenAIResponse(
      'chatComplete',
      {
        id: 'x',
        finish_reason: 'MAX_TOKENS',
        message: {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Hi' },
            { type: 'text', text: '!' },
          ],
        },
        usage,
      },
      stream,
    );
    expect(out.body).toMatchObject({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'command-a-03-2025',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
    });
    expect(out.usage).toEqual({ promptTokens: 10, completionTokens: 4, cachedTokens: null, totalTokens: 14 });
  });

  it('tool calls, and usage from tokens when nothing is billed', () => {
    const out = adapter.toOpenAIResponse(
      'chatComplete',
      {
        finish_reason: 'TOOL_CALL',
        message: {
          role: 'assistant',
          tool_plan: 'plan',
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        usage: { tokens: { input_tokens: 3, output_tokens: 2 } },
      },
      stream,
    );
    const choice = (out.body.choices as any[])[0];
    expect(choice.message).toMatchObject({
      content: null,
      tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
    });
    expect(choice.finish_reason).toBe('tool_calls');
    expect(out.usage?.promptTokens).toBe(3);
  });

  it.each([
    ['COMPLETE', 'stop'],
    ['STOP_SEQUENCE', 'stop'],
    ['complete', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['TOOL_CALL', 'tool_calls'],
  ])('finish %s → %s', (reason, expected) => {
    expect(
      (
        adapter.toOpenAIResponse('chatComplete', { finish_reason: reason, message: { content: [] } }, stream).body
          .choices as any[]
      )[0].finish_reason,
    ).toBe(expected);
  });
});

describe('cohere chat stream', () => {
  const translate = (bytes: string[], context: StreamContext = stream) => {
    const translator = adapter.createStreamTranslator('chatComplete', context);
    const events = [...bytes.flatMap((b) => translator.push(Buffer.from(b))), ...translator.end()];
    const data = events.map((e) => e.replace(/^data: /, '').trim());
    return { translator, data, chunks: data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d)) };
  };

  it('text deltas, finish reason, usage chunk and [DONE], whatever the chunk boundaries', () => {
    const raw = [
      sse('message-start', { id: 'm1', delta: { message: { role: 'assistant' } } }),
      sse('content-start', { index: 0 }),
      sse('content-delta', { index: 0, delta: { message: { content: { text: 'Hel' } } } }),
      sse('content-delta', { index: 0, delta: { message: { content: { text: 'lo' } } } }),
      sse('content-end', { index: 0 }),
      sse('message-end', { delta: { finish_reason: 'COMPLETE', usage } }),
    ]
      .join('')
      .replace(/\n/g, '\r\n');
    const pieces = raw.match(/[\s\S]{1,7}/g)!;
    const { translator, data, chunks } = translate(pieces);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hello');
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
    });
    expect(data.at(-1)).toBe('[DONE]');
    expect(translator.usage?.promptTokens).toBe(10);
    expect(translator.error).toBeNull();
  });

  it('no usage chunk unless asked, but usage is still reported for the log', () => {
    const { translator, chunks } = translate(
      [sse('message-start'), sse('message-end', { delta: { finish_reason: 'COMPLETE', usage } })],
      { ...stream, includeUsage: false },
    );
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(translator.usage?.completionTokens).toBe(4);
  });

  it('tool-call events become indexed tool_calls deltas', () => {
    const { chunks } = translate([
      sse('message-start'),
      sse('tool-plan-delta', { delta: { message: { tool_plan: 'I will' } } }),
      sse('tool-call-start', {
        index: 0,
        delta: { message: { tool_calls: { id: 'f_1', type: 'function', function: { name: 'f', arguments: '' } } } },
      }),
      sse('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: '{"a":' } } } } }),
      sse('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: '1}' } } } } }),
      sse('tool-call-end', { index: 0 }),
      sse('tool-call-start', {
        index: 1,
        delta: { message: { tool_calls: { id: 'g_1', type: 'function', function: { name: 'g', arguments: '{}' } } } },
      }),
      sse('message-end', { delta: { finish_reason: 'TOOL_CALL', usage } }),
    ]);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'f_1', type: 'function', function: { name: 'f', arguments: '' } });
    expect(
      calls
        .filter((c: any) => c.index === 0)
        .map((c: any) => c.function.arguments)
        .join(''),
    ).toBe('{"a":1}');
    expect(calls.at(-1)).toMatchObject({ index: 1, id: 'g_1', function: { name: 'g', arguments: '{}' } });
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls');
  });

  it.each([
    [
      'a message-end with finish reason ERROR',
      [
        sse('message-start'),
        sse('content-delta', { delta: { message: { content: { text: 'a' } } } }),
        sse('message-end', { delta: { finish_reason: 'ERROR' } }),
      ],
    ],
    [
      'an error body inside the stream',
      [sse('message-start'), `data: ${JSON.stringify({ message: 'internal server error' })}\n\n`],
    ],
    [
      'a stream cut before message-end',
      [sse('message-start'), sse('content-delta', { delta: { message: { content: { text: 'a' } } } })],
    ],
    ['an event that is not JSON', [sse('message-start'), 'event: content-delta\ndata: {oops\n\n']],
  ])('%s ends with an error event and no [DONE]', (_name, events) => {
    const { translator, data } = translate(events);
    expect(data.at(-1)).not.toBe('[DONE]');
    expect(JSON.parse(data.at(-1)!)).toMatchObject({ error: { type: 'api_error', message: expect.any(String) } });
    expect(translator.error?.message).toEqual(expect.any(String));
  });
});

describe('cohere errors', () => {
  it.each([
    [{ message: 'invalid request: model is required' }, 'invalid request: model is required'],
    [{ id: 'x', message: 'no api key supplied' }, 'no api key supplied'],
    [{ error: { message: 'nested' } }, 'nested'],
    [{ detail: 'detail text' }, 'detail text'],
  ])('%j → message', (body, message) => {
    expect(adapter.toOpenAIError(400, Buffer.from(JSON.stringify(body)))).toEqual({
      status: 400,
      message,
      type: 'invalid_request_error',
    });
  });

  it('keeps the status and says what happened when the body is not JSON', () => {
    expect(adapter.toOpenAIError(503, Buffer.from('<html>'))).toEqual({
      status: 503,
      message: 'The provider answered with HTTP 503.',
      type: 'api_error',
    });
    expect(adapter.toOpenAIError(401, Buffer.from('{"message":"invalid api token"}')).type).toBe(
      'authentication_error',
    );
  });
});

describe('cohere embeddings', () => {
  it('requests floats with input_type (search_document by default, or the request’s own)', async () => {
    const { request, json } = await built({ model: 'embed-v4.0', input: 'hello', dimensions: 256 }, 'embed');
    expect(request.url).toBe('https://api.cohere.com/v2/embed');
    expect(json).toEqual({
      model: 'embed-v4.0',
      texts: ['hello'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 256,
    });
    expect((await built({ model: 'e', input: ['a'], input_type: 'search_query' }, 'embed')).json.input_type).toBe(
      'search_query',
    );
    await expect(built({ model: 'e', input: ['a'], input_type: 'nope' }, 'embed')).rejects.toMatchObject({
      param: 'input_type',
    });
    await expect(built({ model: 'e', input: [1, 2, 3] }, 'embed')).rejects.toMatchObject({ param: 'input' });
  });

  it('answers an OpenAI embedding list, in base64 when the request asked for it', () => {
    const answer = {
      id: 'e',
      embeddings: {
        float: [
          [0.5, -1],
          [2, 0],
        ],
      },
      texts: ['a', 'b'],
      meta: { billed_units: { input_tokens: 2 } },
      response_type: 'embeddings_by_type',
    };
    const plain = adapter.toOpenAIResponse('embed', answer, { ...stream, model: 'embed-v4.0' });
    expect(plain.body).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, -1] },
        { object: 'embedding', index: 1, embedding: [2, 0] },
      ],
      model: 'embed-v4.0',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
    expect(plain.usage?.promptTokens).toBe(2);
    const encoded = adapter.toOpenAIResponse('embed', answer, { ...stream, request: { encoding_format: 'base64' } });
    const first = (encoded.body.data as any[])[0].embedding as string;
    const buf = Buffer.from(first, 'base64');
    expect(Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4))).toEqual([0.5, -1]);
  });
});

describe('cohere rerank', () => {
  it('sends documents as strings and answers results with search units; documents echoed when asked', async () => {
    const request = {
      model: 'rerank-v3.5',
      query: 'q',
      documents: ['a', { text: 'b' }, { title: 't' }],
      top_n: 2,
      return_documents: true,
    };
    const { request: sent, json } = await built(request, 'rerank');
    expect(sent.url).toBe('https://api.cohere.com/v2/rerank');
    expect(json).toEqual({ model: 'rerank-v3.5', query: 'q', documents: ['a', 'b', '{"title":"t"}'], top_n: 2 });
    const answer = {
      id: 'r',
      results: [
        { index: 1, relevance_score: 0.9 },
        { index: 0, relevance_score: 0.1 },
      ],
      meta: { billed_units: { search_units: 1 } },
    };
    const out = adapter.toOpenAIResponse('rerank', answer, { ...stream, model: 'rerank-v3.5', request });
    expect(out.body).toMatchObject({
      id: 'r',
      model: 'rerank-v3.5',
      results: [
        { index: 1, relevance_score: 0.9, document: { text: 'b' } },
        { index: 0, relevance_score: 0.1, document: { text: 'a' } },
      ],
      usage: { search_units: 1 },
    });
    expect((adapter.toOpenAIResponse('rerank', answer, stream).body.results as any[])[0]).toEqual({
      index: 1,
      relevance_score: 0.9,
    });
  });
});

describe('cohere pass-through', () => {
  it('forwards other paths under the v2 base with the key, and refuses dot segments', async () => {
    expect(await adapter.passThrough!('/models?page_size=5', 'GET', ctx())).toEqual({
      url: 'https://api.cohere.com/v2/models?page_size=5',
      method: 'GET',
      headers: { authorization: 'Bearer co-key' },
      body: null,
    });
    await expect(adapter.passThrough!('/../v1/chat', 'POST', ctx())).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(adapter.passThrough!('/%2e%2e/x', 'POST', ctx())).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });
});
