import { exportPKCS8, generateKeyPair } from 'jose';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { mockGoogleReply, startMockGoogle, type MockGoogleOptions } from '../helpers/mock-google-upstream.js';

const GEMINI_KEY = 'AIza-test-gemini-key-0123456789';

async function setup(options: MockGoogleOptions = { apiKey: GEMINI_KEY }) {
  const g = await startGateway();
  const google = await startMockGoogle(options);
  onTestFinished(() => google.close());
  const gemini = g.openai(
    { 'x-service-provider': 'google', 'x-service-custom-host': google.url },
    { apiKey: GEMINI_KEY },
  );
  return { g, google, gemini };
}

describe('google provider through the gateway', () => {
  it('answers a chat completion and logs its usage', async () => {
    const { g, google, gemini } = await setup();
    const completion = await gemini.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello Gemini' },
      ],
      temperature: 0.3,
      max_tokens: 64,
    });
    expect(completion.choices[0]!.message.content).toBe(mockGoogleReply('Hello Gemini'));
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.model).toBe('gemini-2.5-flash-001');
    const sent = google.requests[0]!;
    expect(sent.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hello Gemini' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { temperature: 0.3, maxOutputTokens: 64 },
    });
    const usage = completion.usage!;
    expect(usage.completion_tokens).toBe(usage.total_tokens - usage.prompt_tokens);
    const [log] = await g.logs(1);
    expect(log).toMatchObject({
      provider: 'google',
      status_code: 200,
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      total_tokens: usage.total_tokens,
    });
    expect(g.logLines.join('\n')).not.toContain(GEMINI_KEY);
  });

  it('streams chunks from alt=sse events, with usage at the end', async () => {
    const { g, google, gemini } = await setup();
    const stream = await gemini.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Stream please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(google.requests[0]!.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(mockGoogleReply('Stream please'));
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    const usage = chunks.at(-1)!.usage!;
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(usage.total_tokens).toBeGreaterThan(usage.prompt_tokens);
    const [log] = await g.logs(1);
    expect(log).toMatchObject({
      provider: 'google',
      stream: true,
      status_code: 200,
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
    });
  });

  it('round-trips a tool call, thought signature included', async () => {
    const { google, gemini } = await setup();
    google.behave(
      {
        kind: 'function-call',
        name: 'get_weather',
        args: { city: 'Paris' },
        thoughtSignature: 'Q2lnbmF0dXJlLWZyb20tZ2VtaW5pLTM=',
      },
      { times: 1 },
    );
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ];
    const messages: any[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await gemini.chat.completions.create({ model: 'gemini-3-flash', messages, tools });
    const call = first.choices[0]!.message.tool_calls![0]! as any;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(google.requests[0]!.json.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Weather for a city',
            parametersJsonSchema: tools[0]!.function.parameters,
          },
        ],
      },
    ]);

    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '{"temp_c":18}' });
    const second = await gemini.chat.completions.create({ model: 'gemini-3-flash', messages, tools });
    expect(second.choices[0]!.message.content).toBe('Tool get_weather said {"temp_c":18}.');
    expect(google.requests[1]!.json.contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'get_weather', args: { city: 'Paris' } },
            thoughtSignature: 'Q2lnbmF0dXJlLWZyb20tZ2VtaW5pLTM=',
          },
        ],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp_c: 18 } } }] },
    ]);
  });

  it('sends an image part inline', async () => {
    const { google, gemini } = await setup();
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const completion = await gemini.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Describe' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          ],
        },
      ],
    });
    expect(completion.choices[0]!.message.content).toBe(mockGoogleReply('Describe'));
    expect(google.requests[0]!.json.contents[0].parts).toEqual([
      { text: 'Describe' },
      { inlineData: { mimeType: 'image/png', data: png } },
    ]);
  });

  it('embeds one text with embedContent and several with batchEmbedContents', async () => {
    const { g, google, gemini } = await setup();
    const one = await gemini.embeddings.create({
      model: 'gemini-embedding-001',
      input: 'hello',
      dimensions: 4,
      encoding_format: 'float',
    });
    expect(one.data).toHaveLength(1);
    expect(one.data[0]!.embedding).toHaveLength(4);
    expect(google.requests[0]!.url).toBe('/v1beta/models/gemini-embedding-001:embedContent');
    const many = await gemini.embeddings.create({
      model: 'gemini-embedding-001',
      input: ['a', 'bb', 'ccc'],
      encoding_format: 'float',
    });
    expect(many.data.map((d) => [d.index, d.embedding.length])).toEqual([
      [0, 8],
      [1, 8],
      [2, 8],
    ]);
    expect(google.requests[1]!.url).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect((await g.logs(2)).every((l: any) => l.status_code === 200 && l.provider === 'google')).toBe(true);
  });

  it("maps the provider's error body and status", async () => {
    const { g, google, gemini } = await setup();
    google.behave(
      {
        kind: 'error',
        status: 429,
        googleStatus: 'RESOURCE_EXHAUSTED',
        message: 'Resource has been exhausted (e.g. check quota).',
      },
      { times: 1 },
    );
    const error = await gemini.chat.completions
      .create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(error.status).toBe(429);
    expect(error.error).toEqual({
      message: 'Resource has been exhausted (e.g. check quota).',
      type: 'rate_limit_error',
      param: null,
      code: 'RESOURCE_EXHAUSTED',
    });

    const wrongKey = await g
      .openai({ 'x-service-provider': 'google', 'x-service-custom-host': google.url }, { apiKey: 'AIza-wrong' })
      .chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.error).toMatchObject({
      message: 'API key not valid. Please pass a valid API key.',
      code: 'INVALID_ARGUMENT',
    });
    const logs = await g.logs(2);
    expect(logs.map((l: any) => [l.status_code, l.error_code]).sort()).toEqual([
      [400, 'UPSTREAM_ERROR'],
      [429, 'UPSTREAM_ERROR'],
    ]);
  });

  it('ends a stream with an error event, and no [DONE], when Gemini fails mid-stream', async () => {
    const { g, google } = await setup();
    google.behave(
      { kind: 'stream-error', chunks: 2, googleStatus: 'INTERNAL', message: 'An internal error has occurred.' },
      { times: 1 },
    );
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-api-key': g.adminKey,
        'x-service-provider': 'google',
        'x-service-custom-host': google.url,
        authorization: `Bearer ${GEMINI_KEY}`,
      },
      body: JSON.stringify({
        model: 'gemini-2.5-flash',
        stream: true,
        messages: [{ role: 'user', content: 'Tell me a long story' }],
      }),
    });
    expect(res.status).toBe(200);
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.join('')).not.toContain('[DONE]');
    expect(JSON.parse(events.at(-1)!.slice(6))).toEqual({
      error: { message: 'An internal error has occurred.', type: 'api_error', param: null, code: 'INTERNAL' },
    });
    expect(
      events
        .slice(0, -1)
        .map((e) => JSON.parse(e.slice(6)).choices[0].delta.content)
        .join(''),
    ).toBe('Gemini says:');
    const [log] = await g.logs(1);
    expect(log).toMatchObject({
      error_code: 'UPSTREAM_STREAM_ERROR',
      is_success: false,
      error_message: 'An internal error has occurred.',
    });
  });
});

describe('vertex-ai provider through the gateway', () => {
  async function vertexSetup() {
    const keys = await generateKeyPair('RS256', { extractable: true });
    const { g, google } = await setup({ publicKey: keys.publicKey });
    const account = {
      type: 'service_account',
      project_id: 'sa-project',
      private_key_id: 'k1',
      private_key: await exportPKCS8(keys.privateKey),
      client_email: 'svcgw-test@sa-project.iam.gserviceaccount.com',
      token_uri: google.tokenUri,
    };
    return { g, google, account };
  }

  it('exchanges a stored service account for a token once, and reuses it', async () => {
    const { g, google, account } = await vertexSetup();
    const created = await g.admin.post('/v1/integrations', {
      name: 'Vertex',
      slug: 'my-vertex',
      ai_provider_id: 'vertex-ai',
      configurations: {
        custom_host: google.url,
        vertex_project_id: 'my-project',
        vertex_region: 'us-central1',
        vertex_service_account_json: JSON.stringify(account),
      },
    });
    expect(created.status).toBe(200);
    const vertex = g.openai({ 'x-service-provider': '@my-vertex' }, { apiKey: 'unused' });
    const first = await vertex.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Hello Vertex' }],
    });
    const second = await vertex.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Again' }],
    });
    expect(first.choices[0]!.message.content).toBe(mockGoogleReply('Hello Vertex'));
    expect(second.choices[0]!.message.content).toBe(mockGoogleReply('Again'));
    expect(google.tokenRequests).toBe(1);
    expect(google.requests.map((r) => r.url)).toEqual([
      '/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
      '/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    ]);
    const tokens = google.requests.map((r) => r.headers.authorization);
    expect(tokens[0]).toMatch(/^Bearer ya29\.mock-/);
    expect(tokens[1]).toBe(tokens[0]);
    const logs = await g.logs(2);
    expect(logs.every((l: any) => l.provider === 'vertex-ai' && l.status_code === 200)).toBe(true);
    const written = g.logLines.join('\n');
    expect(written).not.toContain('PRIVATE KEY');
    expect(written).not.toContain(tokens[0]!.slice(7));
  });

  it('takes the service account from headers, streams, and embeds with predict', async () => {
    const { g, google, account } = await vertexSetup();
    const vertex = g.openai({
      'x-service-provider': 'vertex-ai',
      'x-service-custom-host': google.url,
      'x-service-vertex-project-id': 'header-project',
      'x-service-vertex-region': 'europe-west4',
      'x-service-vertex-service-account-json': Buffer.from(JSON.stringify(account)).toString('base64'),
    });
    const stream = await vertex.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(mockGoogleReply('Hi'));
    const embedded = await vertex.embeddings.create({
      model: 'text-embedding-005',
      input: ['one', 'two'],
      encoding_format: 'float',
    });
    expect(embedded.data).toHaveLength(2);
    expect(embedded.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
    expect(google.requests.map((r) => r.url)).toEqual([
      '/v1/projects/header-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
      '/v1/projects/header-project/locations/europe-west4/publishers/google/models/text-embedding-005:predict',
    ]);
    expect(google.tokenRequests).toBe(1);
  });

  it('answers 502 naming the token endpoint when the exchange is refused', async () => {
    const { g, google, account } = await vertexSetup();
    const other = await generateKeyPair('RS256', { extractable: true });
    const forged = { ...account, private_key: await exportPKCS8(other.privateKey) };
    const vertex = g.openai({
      'x-service-provider': 'vertex-ai',
      'x-service-custom-host': google.url,
      'x-service-vertex-project-id': 'p',
      'x-service-vertex-region': 'us-central1',
      'x-service-vertex-service-account-json': Buffer.from(JSON.stringify(forged)).toString('base64'),
    });
    const error = await vertex.chat.completions
      .create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e) => e);
    expect(error.status).toBe(502);
    expect(error.error.message).toBe(
      `The Vertex AI token exchange at ${google.url} failed with HTTP 400 (invalid_grant: Invalid JWT Signature.).`,
    );
    expect(google.requests).toHaveLength(0);
  });
});
