import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { toGenerateContentRequest } from '../../src/providers/adapters/google/chat-request.js';
import { createGoogleAdapter } from '../../src/providers/adapters/google/adapter.js';
import { createChatStreamTranslator, takeSseEvents } from '../../src/providers/adapters/google/chat-stream.js';
import { toEmbeddingList } from '../../src/providers/adapters/google/embeddings.js';
import { GOOGLE_PROVIDER } from '../../src/providers/adapters/google/providers.js';
import type { AdapterContext, StreamContext } from '../../src/providers/adapters/types.js';
import { adapterFor } from '../../src/providers/adapters/index.js';
import { getProvider } from '../../src/providers/registry.js';

const stream: StreamContext = {
  model: 'gemini-2.5-flash',
  includeUsage: true,
  id: 'chatcmpl-1',
  created: 1_700_000_000,
};
const adapter = createGoogleAdapter();
const geminiCtx = (
  over: Partial<AdapterContext['target']> = {},
  headers: Record<string, string> = {},
): AdapterContext => ({
  provider: GOOGLE_PROVIDER,
  target: { apiKey: 'AIza-test-key', ...over },
  options: {},
  headers,
  dispatcher: new Agent(),
  now: () => 1_700_000_000_000,
});

// Shapes of the examples in Google's generateContent and function-calling documentation.
const DOC_RESPONSE = {
  candidates: [
    {
      content: { parts: [{ text: 'Once upon a time, in a small town...' }], role: 'model' },
      finishReason: 'STOP',
      index: 0,
      safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }],
    },
  ],
  usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 398, totalTokenCount: 406 },
  modelVersion: 'gemini-1.5-flash-001',
};
const DOC_FUNCTION_CALL = {
  candidates: [
    {
      content: {
        role: 'model',
        parts: [{ functionCall: { name: 'set_light_values', args: { brightness: 25, color_temp: 'warm' } } }],
      },
      finishReason: 'STOP',
      index: 0,
    },
  ],
  usageMetadata: {
    promptTokenCount: 50,
    candidatesTokenCount: 10,
    totalTokenCount: 80,
    thoughtsTokenCount: 20,
    cachedContentTokenCount: 30,
  },
};

describe('google adapter: registration', () => {
  it('registers google and vertex-ai with chat and embeddings', () => {
    for (const name of ['google', 'vertex-ai']) {
      const provider = getProvider(name)!;
      expect(provider.auth.kind).toBe('adapter');
      expect([...provider.endpoints].sort()).toEqual(['chatComplete', 'embed', 'proxy']);
      expect(adapterFor(provider)).toBeDefined();
    }
    expect(getProvider('google')!.wireFormat).toBe('google');
    expect(getProvider('vertex-ai')!.wireFormat).toBe('vertex-ai');
  });
});

describe('google adapter: chat request', () => {
  it('maps roles, the system instruction and generation settings', () => {
    const body = toGenerateContentRequest(
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
          { role: 'user', content: 'Hello' },
          { role: 'assistant', content: 'Bonjour' },
          { role: 'user', content: 'How are you?' },
        ],
        temperature: 0.2,
        top_p: 0.9,
        max_tokens: 100,
        stop: 'END',
        n: 2,
        seed: 7,
        response_format: { type: 'json_object' },
        user: 'ignored',
      },
      { requireFileMimeType: false },
    );
    expect(body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hello' }] },
        { role: 'model', parts: [{ text: 'Bonjour' }] },
        { role: 'user', parts: [{ text: 'How are you?' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] },
      generationConfig: {
        temperature: 0.2,
        topP: 0.9,
        candidateCount: 2,
        seed: 7,
        maxOutputTokens: 100,
        stopSequences: ['END'],
        responseMimeType: 'application/json',
      },
    });
  });

  it('prefers max_completion_tokens and passes a JSON schema through', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false };
    const body = toGenerateContentRequest(
      {
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 5,
        max_completion_tokens: 50,
        stop: ['a', 'b'],
        response_format: { type: 'json_schema', json_schema: { name: 's', schema } },
      },
      { requireFileMimeType: false },
    );
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 50,
      stopSequences: ['a', 'b'],
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
  });

  it('turns data: URLs into inlineData and http URLs into fileData', () => {
    const body = toGenerateContentRequest(
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in these?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.JPG', detail: 'high' } },
              { type: 'image_url', image_url: { url: 'https://example.com/image?id=1' } },
              { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            ],
          },
        ],
      },
      { requireFileMimeType: false },
    );
    expect(body.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'What is in these?' },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.JPG' } },
          { fileData: { fileUri: 'https://example.com/image?id=1' } },
          { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
        ],
      },
    ]);
  });

  it('refuses an image URL without a known type on Vertex, and other URL schemes everywhere', () => {
    const image = (url: string) => ({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
    });
    expect(() =>
      toGenerateContentRequest(image('https://example.com/image?id=1'), { requireFileMimeType: true }),
    ).toThrow(/MIME type/);
    expect(() => toGenerateContentRequest(image('ftp://example.com/a.png'), { requireFileMimeType: false })).toThrow(
      /data: URL or an http\(s\) URL/,
    );
    expect(() =>
      toGenerateContentRequest(
        { messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] },
        { requireFileMimeType: false },
      ),
    ).toThrow(/file ids/);
  });

  it('declares tools and maps tool_choice', () => {
    const parameters = { type: 'object', properties: { brightness: { type: 'number' } }, required: ['brightness'] };
    const body = toGenerateContentRequest(
      {
        messages: [{ role: 'user', content: 'Dim the lights' }],
        tools: [
          { type: 'function', function: { name: 'set_light_values', description: 'Sets the lights', parameters } },
        ],
        tool_choice: { type: 'function', function: { name: 'set_light_values' } },
      },
      { requireFileMimeType: false },
    );
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'set_light_values', description: 'Sets the lights', parametersJsonSchema: parameters },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['set_light_values'] },
    });
    const required = toGenerateContentRequest(
      { messages: [{ role: 'user', content: 'x' }], tool_choice: 'required' },
      { requireFileMimeType: false },
    );
    expect(required.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(() =>
      toGenerateContentRequest(
        { messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'web_search' }] },
        { requireFileMimeType: false },
      ),
    ).toThrow(/function tools only/);
  });

  it('sends tool calls back as functionCall and tool results as one functionResponse turn', () => {
    const body = toGenerateContentRequest(
      {
        messages: [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_a~sig~c2lnbmF0dXJl',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
              { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_a~sig~c2lnbmF0dXJl', content: '{"temp":18}' },
          { role: 'tool', tool_call_id: 'call_b', content: 'sunny' },
        ],
      },
      { requireFileMimeType: false },
    );
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' },
          { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temp: 18 } } },
          { functionResponse: { name: 'get_weather', response: { output: 'sunny' } } },
        ],
      },
    ]);
  });

  it('refuses tool results for unknown calls and arguments that are not JSON objects', () => {
    expect(() =>
      toGenerateContentRequest(
        { messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }] },
        { requireFileMimeType: false },
      ),
    ).toThrow(/matches no tool call/);
    const bad = {
      messages: [
        { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }] },
      ],
    };
    expect(() => toGenerateContentRequest(bad, { requireFileMimeType: false })).toThrow(/JSON object/);
  });
});

describe('google adapter: buildRequest', () => {
  it('calls generateContent or streamGenerateContent?alt=sse with x-goog-api-key', async () => {
    const plain = await adapter.buildRequest(
      'chatComplete',
      { model: 'models/gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] },
      geminiCtx(),
    );
    expect(plain.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    expect(plain.headers).toEqual({ 'content-type': 'application/json', 'x-goog-api-key': 'AIza-test-key' });
    expect(JSON.parse(String(plain.body))).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    const streamed = await adapter.buildRequest(
      'chatComplete',
      { model: 'gemini-2.5-flash', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      geminiCtx({ customHost: 'http://127.0.0.1:9' }),
    );
    expect(streamed.url).toBe('http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  });

  it('uses embedContent for one input and batchEmbedContents for several', async () => {
    const one = await adapter.buildRequest(
      'embed',
      { model: 'gemini-embedding-001', input: 'hello', dimensions: 768 },
      geminiCtx(),
    );
    expect(one.url).toMatch(/\/models\/gemini-embedding-001:embedContent$/);
    expect(JSON.parse(String(one.body))).toEqual({
      content: { parts: [{ text: 'hello' }] },
      outputDimensionality: 768,
    });
    const many = await adapter.buildRequest('embed', { model: 'gemini-embedding-001', input: ['a', 'b'] }, geminiCtx());
    expect(many.url).toMatch(/:batchEmbedContents$/);
    expect(JSON.parse(String(many.body))).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] } },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] } },
      ],
    });
    await expect(adapter.buildRequest('embed', { model: 'm', input: [1, 2, 3] }, geminiCtx())).rejects.toThrow(
      /token arrays/,
    );
  });

  it('requires a model and offers pass-through with the key', async () => {
    await expect(adapter.buildRequest('chatComplete', { messages: [] }, geminiCtx())).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      param: 'model',
    });
    const through = await adapter.passThrough!('/models?pageSize=5', 'GET', geminiCtx());
    expect(through).toMatchObject({
      url: 'https://generativelanguage.googleapis.com/v1beta/models?pageSize=5',
      headers: { 'x-goog-api-key': 'AIza-test-key' },
    });
    await expect(adapter.passThrough!('/models/../../x', 'GET', geminiCtx())).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
  });
});

describe('google adapter: responses', () => {
  it('translates the documented text answer and its usage', () => {
    const { body, usage } = adapter.toOpenAIResponse('chatComplete', DOC_RESPONSE, stream);
    expect(body).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gemini-1.5-flash-001',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Once upon a time, in a small town...', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 8,
        completion_tokens: 398,
        total_tokens: 406,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
    expect(usage).toEqual({ promptTokens: 8, completionTokens: 398, cachedTokens: null, totalTokens: 406 });
  });

  it('translates a function call, counting thinking tokens as output', () => {
    const { body, usage } = adapter.toOpenAIResponse('chatComplete', DOC_FUNCTION_CALL, stream);
    const choice = (body.choices as any[])[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^call_[0-9a-f]{24}$/),
        type: 'function',
        function: { name: 'set_light_values', arguments: '{"brightness":25,"color_temp":"warm"}' },
      },
    ]);
    expect(usage).toEqual({ promptTokens: 50, completionTokens: 30, cachedTokens: 30, totalTokens: 80 });
    expect(body.usage).toMatchObject({
      completion_tokens: 30,
      prompt_tokens_details: { cached_tokens: 30 },
      completion_tokens_details: { reasoning_tokens: 20 },
    });
  });

  it('maps finish reasons and leaves thought summaries out', () => {
    const answer = (finishReason: string) => ({
      candidates: [{ content: { parts: [{ text: 'thinking…', thought: true }, { text: 'done' }] }, finishReason }],
    });
    const finish = (reason: string) =>
      (adapter.toOpenAIResponse('chatComplete', answer(reason), stream).body.choices as any[])[0];
    expect(finish('MAX_TOKENS').finish_reason).toBe('length');
    expect(finish('SAFETY').finish_reason).toBe('content_filter');
    expect(finish('RECITATION').finish_reason).toBe('content_filter');
    expect(finish('OTHER').finish_reason).toBe('stop');
    expect(finish('STOP').message.content).toBe('done');
    const blocked = adapter.toOpenAIResponse('chatComplete', { promptFeedback: { blockReason: 'SAFETY' } }, stream).body
      .choices as any[];
    expect(blocked[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: null } });
  });

  it('translates the three embedding answers', () => {
    expect(toEmbeddingList({ embedding: { values: [0.1, 0.2] } }, 'm').body).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
      model: 'm',
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
    expect(
      (toEmbeddingList({ embeddings: [{ values: [1] }, { values: [2] }] }, 'm').body.data as any[]).map(
        (d) => d.embedding,
      ),
    ).toEqual([[1], [2]]);
    const vertex = toEmbeddingList(
      {
        predictions: [
          { embeddings: { statistics: { truncated: false, token_count: 6 }, values: [0.5] } },
          { embeddings: { statistics: { token_count: 4 }, values: [0.25] } },
        ],
      },
      'text-embedding-005',
    );
    expect(vertex.usage).toEqual({ promptTokens: 10, completionTokens: null, cachedTokens: null, totalTokens: 10 });
    expect(vertex.body.usage).toEqual({ prompt_tokens: 10, total_tokens: 10 });
  });

  it('maps Google error bodies, keeping the status and the canonical code', () => {
    const body = Buffer.from(
      JSON.stringify({
        error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' },
      }),
    );
    expect(adapter.toOpenAIError(429, body)).toEqual({
      status: 429,
      message: 'Resource has been exhausted (e.g. check quota).',
      type: 'rate_limit_error',
      code: 'RESOURCE_EXHAUSTED',
    });
    const wrapped = Buffer.from(JSON.stringify([{ error: { code: 400, message: 'Bad', status: 'INVALID_ARGUMENT' } }]));
    expect(adapter.toOpenAIError(400, wrapped)).toMatchObject({
      message: 'Bad',
      type: 'invalid_request_error',
      code: 'INVALID_ARGUMENT',
    });
    expect(adapter.toOpenAIError(503, Buffer.from('<html>busy</html>'))).toEqual({
      status: 503,
      message: 'The provider answered with HTTP 503.',
      type: 'api_error',
      code: undefined,
    });
  });
});

describe('google adapter: streams', () => {
  const event = (value: unknown) => `data: ${JSON.stringify(value)}\r\n\r\n`;
  const parse = (frames: string[]) =>
    frames.map((f) => (f.startsWith('data: [DONE]') ? '[DONE]' : JSON.parse(f.slice(6))));

  it('splits SSE events across chunk boundaries and CRLF framing', () => {
    expect(takeSseEvents('data: {"a":1}\r\n\r\ndata: {"b"')).toEqual({ events: ['{"a":1}'], rest: 'data: {"b"' });
    expect(takeSseEvents(': comment\n\ndata:{"c":3}', true).events).toEqual(['{"c":3}']);
    const split = takeSseEvents('data: {"a":1}\r');
    expect(split.events).toEqual([]);
    expect(takeSseEvents(`${split.rest}\ndata: {"b":2}\r\n\r\n`).events).toEqual(['{"a":1}\n{"b":2}']);
  });

  it('turns text events into chunks, with the finish and then usage at the end', () => {
    const translator = adapter.createStreamTranslator('chatComplete', stream);
    const first = event({
      candidates: [{ content: { parts: [{ text: 'Hel' }], role: 'model' }, index: 0 }],
      usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 },
      modelVersion: 'gemini-2.5-flash',
    });
    const last = event({
      candidates: [{ content: { parts: [{ text: 'lo' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 },
      modelVersion: 'gemini-2.5-flash',
    });
    const bytes = Buffer.from(first + last);
    // Split inside a multi-byte-safe boundary and inside an event.
    const out = [
      ...translator.push(bytes.subarray(0, 17)),
      ...translator.push(bytes.subarray(17)),
      ...translator.end(),
    ];
    const chunks = parse(out);
    expect(chunks.map((c: any) => (c === '[DONE]' ? c : c.choices[0]?.delta))).toEqual([
      { role: 'assistant', content: 'Hel' },
      { content: 'lo' },
      {},
      undefined,
      '[DONE]',
    ]);
    expect(chunks[2].choices[0].finish_reason).toBe('stop');
    expect(chunks[3]).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [],
      usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
    });
    expect(chunks[0]).toMatchObject({ id: 'chatcmpl-1', created: 1_700_000_000, model: 'gemini-2.5-flash' });
    expect(translator.usage).toEqual({ promptTokens: 4, completionTokens: 2, cachedTokens: null, totalTokens: 6 });
    expect(translator.error).toBeNull();
  });

  it('leaves the usage chunk out unless asked, and streams function calls whole', () => {
    const translator = createChatStreamTranslator({ ...stream, includeUsage: false });
    const out = parse([...translator.push(Buffer.from(event(DOC_FUNCTION_CALL))), ...translator.end()]);
    expect(out[0].choices[0].delta).toEqual({
      role: 'assistant',
      tool_calls: [
        {
          index: 0,
          id: expect.any(String),
          type: 'function',
          function: { name: 'set_light_values', arguments: '{"brightness":25,"color_temp":"warm"}' },
        },
      ],
    });
    expect(out[1].choices[0]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
    expect(out[2]).toBe('[DONE]');
    expect(translator.usage).toMatchObject({ promptTokens: 50, completionTokens: 30 });
  });

  it('ends with an error event and no [DONE] when the stream reports an error', () => {
    const translator = adapter.createStreamTranslator('chatComplete', stream);
    const text = event({ candidates: [{ content: { parts: [{ text: 'Hi' }] }, index: 0 }] });
    const failure = event({ error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } });
    const out = [...translator.push(Buffer.from(text + failure + text)), ...translator.end()];
    expect(out).toHaveLength(2);
    expect(JSON.parse(out[1]!.slice(6))).toEqual({
      error: { message: 'An internal error has occurred.', type: 'api_error', param: null, code: 'INTERNAL' },
    });
    expect(translator.error).toEqual({ message: 'An internal error has occurred.', code: 'INTERNAL' });
    expect(out.join('')).not.toContain('[DONE]');
  });
});
