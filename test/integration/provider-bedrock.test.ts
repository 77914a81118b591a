import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Agent } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { BEDROCK_REPLY, startMockBedrock, type MockBedrock } from '../helpers/mock-bedrock-upstream.js';
import { startTestServer } from '../helpers/start-test-server.js';

const KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const TEMPORARY = {
  accessKeyId: 'ASIATEMPORARY',
  secretAccessKey: 'temporary-secret-access-key',
  sessionToken: 'session-token-value',
};
const API_KEY = 'bedrock-api-key-example';
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const RERANK_ARN = 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0';

async function setup() {
  const mock = await startMockBedrock({ credentials: [KEYS, TEMPORARY], apiKeys: [API_KEY] });
  onTestFinished(() => mock.close());
  const g = await startGateway();
  const headers = (overrides: Record<string, string> = {}) => ({
    'x-service-provider': 'bedrock',
    'x-service-custom-host': mock.url,
    'x-service-aws-access-key-id': KEYS.accessKeyId,
    'x-service-aws-secret-access-key': KEYS.secretAccessKey,
    'x-service-aws-region': 'us-west-2',
    ...overrides,
  });
  return {
    g,
    mock,
    headers,
    client: (overrides: Record<string, string> = {}) => g.openai(headers(overrides), { apiKey: 'not-a-bedrock-key' }),
  };
}

const lastRequest = (mock: MockBedrock) => mock.requests[mock.requests.length - 1]!;

describe('bedrock through the gateway', () => {
  it('answers a chat completion through Converse, signed with SigV4, and logs the usage', async () => {
    const { g, mock, client } = await setup();
    const completion = await client().chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
      ],
      max_tokens: 64,
      temperature: 0.2,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0]!.message.content).toBe(`${BEDROCK_REPLY}: 11 chars.`);
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    // Bedrock counts the 5 cache-read tokens apart from inputTokens (12); prompt_tokens includes them.
    expect(completion.usage).toEqual({
      prompt_tokens: 17,
      completion_tokens: 5,
      total_tokens: 22,
      prompt_tokens_details: { cached_tokens: 5 },
    });

    const upstream = lastRequest(mock);
    expect(upstream.url).toBe('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse');
    expect(upstream.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, /,
    );
    expect(upstream.json).toEqual({
      system: [{ text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ text: 'Hello there' }] }],
      inferenceConfig: { maxTokens: 64, temperature: 0.2 },
    });

    const [log] = await g.logs(1);
    expect(log).toMatchObject({
      provider: 'bedrock',
      model: MODEL,
      status_code: 200,
      prompt_tokens: 17,
      completion_tokens: 5,
      total_tokens: 22,
    });
    expect(g.logLines.join('\n')).not.toContain(KEYS.secretAccessKey);
  });

  it('streams ConverseStream event frames as chat.completion.chunk events, usage last', async () => {
    const { g, client } = await setup();
    const stream = await client().chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Stream please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(`${BEDROCK_REPLY}: 13 chars.`);
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 17, completion_tokens: 5, total_tokens: 22 });
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ provider: 'bedrock', stream: true, status_code: 200, total_tokens: 22 });
  });

  it('round-trips a tool call: toolUse out, toolResult back in', async () => {
    const { mock, client } = await setup();
    const tools: OpenAI.ChatCompletionFunctionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client().chat.completions.create({ model: MODEL, messages, tools, tool_choice: 'auto' });
    const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call).toEqual({
      id: 'tooluse_mock0001',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    expect(lastRequest(mock).json.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            description: 'Weather of a city',
            inputSchema: { json: tools[0]!.function.parameters },
          },
        },
      ],
      toolChoice: { auto: {} },
    });

    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18°C, sunny' });
    const second = await client().chat.completions.create({ model: MODEL, messages, tools });
    expect(second.choices[0]!.message.content).toBe(`${BEDROCK_REPLY}: the tool said 18°C, sunny`);
    expect(lastRequest(mock).json.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [{ toolUse: { toolUseId: 'tooluse_mock0001', name: 'get_weather', input: { city: 'Paris' } } }],
      },
      {
        role: 'user',
        content: [{ toolResult: { toolUseId: 'tooluse_mock0001', content: [{ text: '18°C, sunny' }] } }],
      },
    ]);
  });

  it('streams a tool call', async () => {
    const { client } = await setup();
    const stream = await client().chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      stream: true,
    });
    let args = '';
    let name = '';
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
  });

  it('sends an image part as bytes', async () => {
    const { mock, client } = await setup();
    const completion = await client().chat.completions.create({
      model: MODEL,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1X1}` } },
          ],
        },
      ],
    });
    expect(completion.choices[0]!.message.content).toBe(
      `${BEDROCK_REPLY}: I see a png image of ${Buffer.from(PNG_1X1, 'base64').length} bytes.`,
    );
    expect(lastRequest(mock).json.messages[0].content[1]).toEqual({
      image: { format: 'png', source: { bytes: PNG_1X1 } },
    });
  });

  it('embeds with Titan and Cohere through InvokeModel', async () => {
    const { g, mock, client } = await setup();
    const titan = await client().embeddings.create({
      model: 'amazon.titan-embed-text-v2:0',
      input: 'hello bedrock world',
      dimensions: 4,
      encoding_format: 'float',
    });
    expect(lastRequest(mock).url).toBe('/model/amazon.titan-embed-text-v2%3A0/invoke');
    expect(lastRequest(mock).json).toEqual({ inputText: 'hello bedrock world', dimensions: 4 });
    expect(titan).toMatchObject({
      object: 'list',
      model: 'amazon.titan-embed-text-v2:0',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    expect(titan.data).toHaveLength(1);
    expect(titan.data[0]!.embedding).toHaveLength(4);

    const cohere = await client().embeddings.create({
      model: 'cohere.embed-english-v3',
      input: ['one', 'three'],
      encoding_format: 'float',
    });
    expect(lastRequest(mock).json).toEqual({ texts: ['one', 'three'], input_type: 'search_document' });
    expect(cohere.data.map((d) => d.index)).toEqual([0, 1]);
    const logs = await g.logs(2);
    expect(logs.find((l: any) => l.model === 'amazon.titan-embed-text-v2:0')).toMatchObject({
      status_code: 200,
      prompt_tokens: 3,
    });
  });

  it('reranks through the Agent Runtime Rerank API with an ARN model', async () => {
    const { g, mock, headers } = await setup();
    const res = await apiClient(g.baseUrl, g.adminKey).post(
      '/v1/rerank',
      {
        model: RERANK_ARN,
        query: 'capital of France',
        documents: ['Berlin is in Germany.', 'Paris is the capital of France.', 'France has wine.'],
        top_n: 2,
      },
      headers(),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      model: RERANK_ARN,
      usage: null,
      results: [
        { index: 1, relevance_score: 1 },
        { index: 2, relevance_score: 1 / 3 },
      ],
    });
    const upstream = lastRequest(mock);
    expect(upstream.url).toBe('/rerank');
    expect(upstream.json.rerankingConfiguration).toEqual({
      type: 'BEDROCK_RERANKING_MODEL',
      bedrockRerankingConfiguration: { numberOfResults: 2, modelConfiguration: { modelArn: RERANK_ARN } },
    });
  });

  it('maps a Bedrock error to the OpenAI error shape with its status', async () => {
    const { g, mock, client } = await setup();
    mock.behave({
      kind: 'error',
      status: 429,
      errorType: 'ThrottlingException',
      message: 'Too many requests, please wait before trying again.',
    });
    const error = await client()
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain(
      'Too many requests, please wait before trying again.',
    );
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      type: 'rate_limit_error',
      code: 'ThrottlingException',
    });
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ provider: 'bedrock', status_code: 429 });
  });

  it('ends the stream with an error event, and no [DONE], on a mid-stream exception', async () => {
    const { g, mock, headers } = await setup();
    mock.behave({
      kind: 'stream-exception',
      exceptionType: 'modelStreamErrorException',
      message: 'The model stream failed.',
    });
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-api-key': g.adminKey, ...headers() },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello there' }], stream: true }),
    });
    const body = await res.text();
    expect(res.status).toBe(200);
    expect(body).toContain('"content":"Hello "');
    expect(body).not.toContain('[DONE]');
    const last = JSON.parse(body.trim().split('\n\n').at(-1)!.slice(6));
    expect(last).toEqual({
      error: { message: 'The model stream failed.', type: 'api_error', param: null, code: 'ModelStreamErrorException' },
    });

    const viaSdk = await (async () => {
      const stream = await g
        .openai(headers())
        .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello there' }], stream: true });
      for await (const chunk of stream) void chunk;
    })().catch((e: unknown) => e);
    expect((viaSdk as Error).message).toContain('The model stream failed.');
    const logs = await g.logs(2);
    expect(logs.every((l: any) => l.provider === 'bedrock' && l.error_code !== null)).toBe(true);
  });

  it('answers a wrong secret with the provider’s 403, naming no secret', async () => {
    const { g, client } = await setup();
    const error = await client({ 'x-service-aws-secret-access-key': 'wrong-secret-key' })
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain(
      'The request signature we calculated does not match the signature you provided.',
    );
    expect(JSON.stringify((error as InstanceType<typeof OpenAI.APIError>).error)).not.toContain('wrong-secret-key');
    expect(g.logLines.join('\n')).not.toContain('wrong-secret-key');
  });

  it('signs temporary credentials with their session token, and takes a Bedrock API key as a bearer token', async () => {
    const { mock, client, g } = await setup();
    const temporary = await client({
      'x-service-aws-access-key-id': TEMPORARY.accessKeyId,
      'x-service-aws-secret-access-key': TEMPORARY.secretAccessKey,
      'x-service-aws-session-token': TEMPORARY.sessionToken,
    }).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(temporary.choices[0]!.message.content).toContain(BEDROCK_REPLY);
    expect(lastRequest(mock).headers['x-amz-security-token']).toBe(TEMPORARY.sessionToken);

    const bearer = g.openai(
      { 'x-service-provider': 'bedrock', 'x-service-custom-host': mock.url },
      { apiKey: API_KEY },
    );
    const viaKey = await bearer.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(viaKey.choices[0]!.message.content).toContain(BEDROCK_REPLY);
    expect(lastRequest(mock).headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('uses a stored provider whose AWS secrets are sealed at rest', async () => {
    const { g, mock } = await setup();
    const created = await g.admin.post('/v1/integrations', {
      name: 'Bedrock',
      slug: 'bedrock-main',
      ai_provider_id: 'bedrock',
      key: 'unused',
      configurations: {
        custom_host: mock.url,
        aws_access_key_id: KEYS.accessKeyId,
        aws_secret_access_key: KEYS.secretAccessKey,
        aws_region: 'eu-central-1',
      },
    });
    expect(created.status).toBe(200);
    expect(JSON.stringify(created.body)).not.toContain(KEYS.secretAccessKey);
    const completion = await g
      .openai({ 'x-service-provider': '@bedrock-main' })
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]!.message.content).toContain(BEDROCK_REPLY);
    expect(lastRequest(mock).headers.authorization).toContain('/eu-central-1/bedrock/aws4_request');
    // aws_secret_access_key matches SECRET_FIELD: no file of the data directory holds it in clear.
    for (const file of readdirSync(g.dataDir))
      expect(readFileSync(join(g.dataDir, file)).includes(KEYS.secretAccessKey)).toBe(false);
  });

  it('refuses a request without a region before calling Bedrock', async () => {
    const { mock, client } = await setup();
    const error = await client({ 'x-service-aws-region': '' })
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('needs an AWS region');
    expect(mock.requests).toHaveLength(0);
  });
});

describe('bedrock default host', () => {
  it('calls bedrock-runtime.{region}.amazonaws.com and signs for that host', async () => {
    const mock = await startMockBedrock({ credentials: [KEYS] });
    onTestFinished(() => mock.close());
    const port = Number(new URL(mock.url).port);
    const upstreamDispatcher = new Agent({
      connect: (_opts, callback) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('connect', () => callback(null, socket));
        socket.once('error', (e) => callback(e, null));
      },
    });
    const t = await startTestServer({ upstreamDispatcher });
    const client = new OpenAI({
      baseURL: `${t.baseUrl}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: {
        'x-service-api-key': t.adminKey,
        'x-service-provider': 'bedrock',
        'x-service-aws-access-key-id': KEYS.accessKeyId,
        'x-service-aws-secret-access-key': KEYS.secretAccessKey,
        'x-service-aws-region': 'ap-southeast-2',
      },
    });
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion.choices[0]!.message.content).toContain(BEDROCK_REPLY);
    expect(mock.requests[0]!.headers.host).toBe('bedrock-runtime.ap-southeast-2.amazonaws.com');
  });
});
