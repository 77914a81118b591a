import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { COHERE_REPLY, COHERE_TOOL_ARGUMENTS, startMockCohere } from '../helpers/mock-cohere-upstream.js';

const MODEL = 'command-a-03-2025';

async function setup() {
  const cohere = await startMockCohere();
  onTestFinished(() => cohere.close());
  const g = await startGateway();
  const headers = { 'x-service-provider': 'cohere', 'x-service-custom-host': cohere.url };
  const client = g.openai(headers, { apiKey: 'co-secret-key' });
  return { g, cohere, headers, client };
}

describe('cohere through the gateway', () => {
  it('chat: sends a v2 chat body with the bearer key and answers a chat.completion with billed usage', async () => {
    const { g, cohere, client } = await setup();
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi there' },
      ],
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END'],
      max_tokens: 100,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message.content).toBe(COHERE_REPLY.join(''));
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 });

    const sent = cohere.requests[0]!;
    expect(sent.url).toBe('/v2/chat');
    expect(sent.headers.authorization).toBe('Bearer co-secret-key');
    expect(sent.json).toMatchObject({
      model: MODEL,
      temperature: 0.2,
      p: 0.9,
      stop_sequences: ['END'],
      max_tokens: 100,
    });
    expect(sent.json.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi there' },
    ]);

    const [log] = await g.logs(1);
    expect(log).toMatchObject({ provider: 'cohere' });
    expect(JSON.stringify(log)).not.toContain('co-secret-key');
  });

  it('chat stream: chunks of text, a finish reason and the usage chunk, then [DONE]', async () => {
    const { cohere, client } = await setup();
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: unknown = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(COHERE_REPLY.join(''));
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 5 });
    expect(cohere.requests[0]!.json.stream).toBe(true);
    expect(cohere.requests[0]!.headers.accept).toBe('text/event-stream');
  });

  it('tools: a tool call comes back with its id, and the tool result goes back to Cohere under that id', async () => {
    const { cohere, client } = await setup();
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'Weather of a city',
          parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        },
      },
    ];
    const messages: any[] = [{ role: 'user', content: 'Weather in Madrid?' }];
    const first = await client.chat.completions.create({ model: MODEL, messages, tools });
    const call = first.choices[0]!.message.tool_calls![0]! as any;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call).toMatchObject({
      type: 'function',
      function: { name: 'get_weather', arguments: COHERE_TOOL_ARGUMENTS },
    });
    expect(cohere.requests[0]!.json.tools).toEqual([{ type: 'function', function: tools[0]!.function }]);

    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '{"temperature":24}' });
    const second = await client.chat.completions.create({ model: MODEL, messages, tools });
    expect(second.choices[0]!.message.content).toBe(COHERE_REPLY.join(''));
    const sent = cohere.requests[1]!.json.messages;
    expect(sent[1]).toMatchObject({
      role: 'assistant',
      tool_calls: [
        { id: call.id, type: 'function', function: { name: 'get_weather', arguments: COHERE_TOOL_ARGUMENTS } },
      ],
    });
    expect(sent[2]).toEqual({ role: 'tool', tool_call_id: call.id, content: '{"temperature":24}' });
  });

  it('tools streamed: tool-call events become tool_calls deltas', async () => {
    const { client } = await setup();
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Weather in Madrid?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
      stream: true,
    });
    let args = '';
    let name = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('get_weather');
    expect(args).toBe(COHERE_TOOL_ARGUMENTS);
    expect(finish).toBe('tool_calls');
  });

  it('embeddings: texts with input_type search_document, floats or base64 back in the OpenAI list', async () => {
    const { cohere, client } = await setup();
    const floats = await client.embeddings.create({
      model: 'embed-v4.0',
      input: ['abc', 'hello'],
      encoding_format: 'float',
    });
    expect(floats.data.map((d) => d.embedding.slice(0, 2))).toEqual([
      [3, 0],
      [5, 1],
    ]);
    expect(floats.usage.prompt_tokens).toBe(3);
    expect(cohere.requests[0]!.url).toBe('/v2/embed');
    expect(cohere.requests[0]!.json).toMatchObject({
      model: 'embed-v4.0',
      texts: ['abc', 'hello'],
      input_type: 'search_document',
      embedding_types: ['float'],
    });

    await client.embeddings.create({
      model: 'embed-v4.0',
      input: 'a query',
      encoding_format: 'float',
      input_type: 'search_query',
    } as any);
    expect(cohere.requests[1]!.json.input_type).toBe('search_query');
  });

  it('rerank: the Cohere-shaped results with search units as usage', async () => {
    const { g, cohere, headers } = await setup();
    const res = await fetch(`${g.baseUrl}/v1/rerank`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-api-key': g.adminKey,
        authorization: 'Bearer co-secret-key',
        ...headers,
      },
      body: JSON.stringify({
        model: 'rerank-v3.5',
        query: 'capital of france',
        documents: ['Berlin is in Germany', { text: 'Paris is the capital of France' }],
        top_n: 2,
      }),
    });
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body.results[0]).toMatchObject({ index: 1, relevance_score: expect.any(Number) });
    expect(body.results).toHaveLength(2);
    expect(body.usage.search_units).toBe(1);
    expect(cohere.requests[0]!.json).toEqual({
      model: 'rerank-v3.5',
      query: 'capital of france',
      documents: ['Berlin is in Germany', 'Paris is the capital of France'],
      top_n: 2,
    });
  });

  it("a provider error keeps Cohere's status and message, in the OpenAI error shape", async () => {
    const { cohere, client } = await setup();
    cohere.behave({
      kind: 'error',
      status: 429,
      message: 'You are using a Trial key, which is limited to 10 API calls / minute.',
    });
    const error: any = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(error.status).toBe(429);
    expect(error.error).toMatchObject({ message: expect.stringContaining('Trial key'), type: 'rate_limit_error' });
    expect(JSON.stringify(error.error)).not.toContain('co-secret-key');
  });

  it('a stream that fails midway ends with an error event and no [DONE]', async () => {
    const { g, cohere, headers } = await setup();
    cohere.behave({ kind: 'stream-error', deltas: 2 });
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-api-key': g.adminKey,
        authorization: 'Bearer co-secret-key',
        ...headers,
      },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true }),
    });
    const text = await res.text();
    expect(text).toContain('"content":"Hello"');
    expect(text).toContain('"error"');
    expect(text).not.toContain('[DONE]');
    const [log] = await g.logs(1);
    expect(log.error_code ?? log.errorCode ?? JSON.stringify(log)).toMatch(/UPSTREAM_STREAM_ERROR/);
  });
});
