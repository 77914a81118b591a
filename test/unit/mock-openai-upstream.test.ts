import OpenAI, { toFile } from 'openai';
import { describe, expect, it, onTestFinished } from 'vitest';
import { mockReply, startMockOpenAI, type MockOpenAIOptions } from '../helpers/mock-openai-upstream.js';

async function start(options: MockOpenAIOptions = {}) {
  const mock = await startMockOpenAI(options);
  onTestFinished(() => mock.close());
  const client = new OpenAI({ baseURL: mock.baseUrl, apiKey: 'x', maxRetries: 0 });
  return { mock, client };
}

/** Reads a fetch body chunk by chunk, so a test can see what has arrived so far. */
function reader(res: Response) {
  const r = res.body!.getReader();
  const decoder = new TextDecoder();
  return {
    next: async () => {
      const { value, done } = await r.read();
      return done ? null : decoder.decode(value, { stream: true });
    },
    cancel: () => r.cancel(),
  };
}

describe('mock OpenAI upstream: OpenAI wire format', () => {
  it('answers chat completions with a chat.completion object and deterministic usage', async () => {
    const { mock, client } = await start();
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hi' },
      ],
    });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      system_fingerprint: expect.any(String),
    });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello from mock: 6 chars.', refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
    expect(completion.choices[0]!.message.content).toBe(mockReply('Say hi'));
    expect(completion.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 });
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0]).toMatchObject({
      method: 'POST',
      url: '/v1/chat/completions',
      json: { model: 'gpt-4o-mini' },
    });
    expect(mock.requests[0]!.headers.authorization).toBe('Bearer x');
  });

  it('streams chat chunks, then a usage chunk with empty choices when include_usage is set', async () => {
    const { client } = await start({ streamChunks: 7 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks).toHaveLength(1 + 7 + 1 + 1);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'gpt-4o')).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(mockReply('hello', 7));
    expect(chunks[8]!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    const last = chunks[9]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 7, total_tokens: 9 });
    expect(chunks.slice(0, 9).every((c) => c.usage === null)).toBe(true);
  });

  it('frames SSE as data lines ending in [DONE], with no usage field unless asked', async () => {
    const { mock } = await start();
    const res = await fetch(`${mock.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const text = await res.text();
    const frames = text.split('\n\n').filter(Boolean);
    expect(frames.every((f) => f.startsWith('data: '))).toBe(true);
    expect(frames.at(-1)).toBe('data: [DONE]');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text).not.toContain('"usage"');
  });

  it('stops at max_tokens with finish_reason length', async () => {
    const { client } = await start();
    const completion = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    });
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Hello from' }, finish_reason: 'length' });
    expect(completion.usage?.completion_tokens).toBe(2);
  });

  it('answers legacy completions as text_completion, plain and streamed', async () => {
    const { client } = await start();
    const plain = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'abcdefgh' });
    expect(plain).toMatchObject({
      object: 'text_completion',
      choices: [{ index: 0, text: mockReply('abcdefgh'), logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 },
    });
    expect(plain.id).toMatch(/^cmpl-/);
    const stream = await client.completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: 'abcdefgh',
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.text ?? '').join('')).toBe(plain.choices[0]!.text);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ object: 'text_completion', choices: [], usage: { total_tokens: 7 } });
  });

  it('returns one embedding per input, the same floats as JSON and as base64', async () => {
    const { client } = await start();
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two words'] });
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['one', 'two words'],
      encoding_format: 'float',
    });
    expect(floats).toMatchObject({
      object: 'list',
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    expect(floats.data.map((d) => [d.object, d.index, d.embedding.length])).toEqual([
      ['embedding', 0, 8],
      ['embedding', 1, 8],
    ]);
    expect(floats.data[0]!.embedding).not.toEqual(floats.data[1]!.embedding);
    expect(decoded.data.map((d) => Array.from(d.embedding))).toEqual(floats.data.map((d) => d.embedding));
    const sized = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'one',
      dimensions: 3,
      encoding_format: 'float',
    });
    expect(sized.data[0]!.embedding).toEqual(floats.data[0]!.embedding.slice(0, 3));
  });

  it('lists and retrieves models, with model_not_found for others', async () => {
    const { client } = await start({ models: ['gpt-a', 'gpt-b'] });
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(['gpt-a', 'gpt-b']);
    expect(await client.models.retrieve('gpt-b')).toEqual({
      id: 'gpt-b',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'system',
    });
    await expect(client.models.retrieve('nope')).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
      param: 'model',
    });
  });

  it('answers the other OpenAI routes in their documented shapes', async () => {
    const { client } = await start();
    const response = await client.responses.create({ model: 'gpt-4.1-mini', input: 'tell me' });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      output_text: mockReply('tell me'),
      usage: { input_tokens: 2, output_tokens: 5, total_tokens: 7 },
    });
    const events = [];
    for await (const event of await client.responses.create({ model: 'gpt-4.1-mini', input: 'tell me', stream: true }))
      events.push(event);
    expect(events[0]!.type).toBe('response.created');
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'completed' } });
    expect(events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('')).toBe(
      mockReply('tell me'),
    );

    const moderation = await client.moderations.create({ input: ['fine', 'FLAG this'] });
    expect(moderation.results.map((r) => [r.flagged, r.categories.violence])).toEqual([
      [false, false],
      [true, true],
    ]);
    const image = await client.images.generate({ model: 'gpt-image-1', prompt: 'a cat', n: 2 });
    expect(image.data).toHaveLength(2);
    expect(Buffer.from(image.data![0]!.b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi' });
    expect(speech.headers.get('content-type')).toBe('audio/mpeg');
    const audio = Buffer.from(await speech.arrayBuffer());
    expect(audio.subarray(0, 3).toString()).toBe('ID3');
    expect(audio.subarray(-256)).toEqual(Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
    const transcript = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await toFile(Buffer.from([1, 2, 3]), 'a.mp3'),
    });
    expect(transcript).toEqual({ text: 'Mock transcription.' });
  });

  it('reranks Cohere-style, best first', async () => {
    const { mock } = await start();
    const res = await fetch(`${mock.baseUrl}/rerank`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'rerank-v3.5',
        query: 'capital of France',
        documents: ['Berlin is big', 'Paris is the capital of France'],
        top_n: 1,
        return_documents: true,
      }),
    });
    expect(await res.json()).toEqual({
      id: expect.any(String),
      results: [
        { index: 1, relevance_score: expect.any(Number), document: { text: 'Paris is the capital of France' } },
      ],
      meta: { api_version: { version: '2', is_experimental: false }, billed_units: { search_units: 1 } },
    });
  });
});

describe('mock OpenAI upstream: errors and behaviours', () => {
  it('surfaces an error behaviour as OpenAI.APIError with status, message and code', async () => {
    const { mock, client } = await start();
    mock.behave({ kind: 'error', status: 429 });
    const err = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err).toMatchObject({ status: 429, code: 'rate_limit_exceeded', type: 'requests', param: null });
    expect((err as Error).message).toBe('429 Rate limit reached for requests. Please try again later.');
  });

  it('limits a behaviour to `times` requests, so client retries succeed', async () => {
    const { mock } = await start();
    const client = new OpenAI({ baseURL: mock.baseUrl, apiKey: 'x', maxRetries: 2 });
    mock.behave({ kind: 'error', status: 503, headers: { 'retry-after-ms': '1' } }, { times: 2 });
    const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(completion.object).toBe('chat.completion');
    expect(mock.requests).toHaveLength(3);
  });

  it('rejects malformed JSON and missing parameters with 400 OpenAI error bodies', async () => {
    const { mock, client } = await start();
    const res = await fetch(`${mock.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        message: expect.stringContaining('could not parse the JSON body'),
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    await expect(client.embeddings.create({ model: 'm' } as never)).rejects.toMatchObject({
      status: 400,
      param: 'input',
      code: 'missing_required_parameter',
    });
  });

  it('requires the configured API key', async () => {
    const { mock, client } = await start({ apiKey: 'sk-right' });
    await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const right = new OpenAI({ baseURL: mock.baseUrl, apiKey: 'sk-right' });
    expect((await right.models.list()).data.length).toBeGreaterThan(0);
  });

  it('sends raw bytes, delays, and drops connections on request', async () => {
    const { mock } = await start();
    mock.behave({
      kind: 'raw',
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: Buffer.from('<h1>bad gateway</h1>'),
    });
    const raw = await fetch(`${mock.baseUrl}/models`);
    expect([raw.status, raw.headers.get('content-type'), await raw.text()]).toEqual([
      502,
      'text/html',
      '<h1>bad gateway</h1>',
    ]);

    mock.behave({ kind: 'delay', ms: 80 });
    const started = Date.now();
    expect((await fetch(`${mock.baseUrl}/models`)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);

    mock.behave({ kind: 'destroy' });
    await expect(fetch(`${mock.baseUrl}/models`)).rejects.toThrow();
    mock.behave(null);
    expect((await fetch(`${mock.baseUrl}/models`)).status).toBe(200);
    expect(mock.aborted).toBe(0);
  });

  it('holds streams after the first chunk until released', async () => {
    const { mock } = await start({ holdStream: true });
    const res = await fetch(`${mock.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    const body = reader(res);
    const first = await body.next();
    expect(first).toContain('"role":"assistant"');
    const pending = body.next();
    const early = await Promise.race([pending, new Promise((resolve) => setTimeout(() => resolve('still held'), 100))]);
    expect(early).toBe('still held');
    mock.releaseStreams();
    let rest = (await pending) ?? '';
    for (let chunk = await body.next(); chunk !== null; chunk = await body.next()) rest += chunk;
    expect(rest.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('counts a client that disconnects from a stream that hangs', async () => {
    const { mock } = await start();
    mock.behave({ kind: 'stream-then-hang', chunks: 3 });
    const controller = new AbortController();
    const res = await fetch(`${mock.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [], stream: true }),
      signal: controller.signal,
    });
    const body = reader(res);
    let seen = '';
    while ((seen.match(/^data: /gm) ?? []).length < 3) seen += (await body.next()) ?? '';
    expect(seen).toContain('chat.completion.chunk');
    controller.abort();
    await mock.waitForAborted(1);
    expect(mock.aborted).toBe(1);
  });

  it('closes promptly with held, hanging and delayed requests in flight', async () => {
    const mock = await startMockOpenAI({ holdStream: true });
    const post = (stream: boolean) =>
      fetch(`${mock.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream }),
      });
    const held = await post(true);
    mock.behave({ kind: 'stream-then-hang', chunks: 1 }, { times: 1 });
    const hanging = await post(true);
    mock.behave({ kind: 'delay', ms: 60_000 });
    const delayed = post(false).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await mock.close();
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(held.text()).rejects.toThrow();
    await expect(hanging.text()).rejects.toThrow();
    expect(await delayed).toBeInstanceOf(Error);
    expect(mock.aborted).toBe(0);
  });
});

describe('mock OpenAI upstream: pass-through plumbing', () => {
  it('echoes unknown routes: method, path with query, end-to-end headers, body bytes', async () => {
    const { mock } = await start();
    const bytes = Buffer.from([0, 1, 2, 254, 255, 10, 13]);
    const res = await fetch(`${mock.url}/v1/files/abc?purpose=batch&x=1`, {
      method: 'PUT',
      headers: { 'x-custom': 'Keep-Case', 'content-type': 'application/octet-stream', connection: 'keep-alive' },
      body: bytes,
    });
    const echo = (await res.json()) as { headers: Record<string, string>; body_base64: string };
    expect(echo).toMatchObject({
      method: 'PUT',
      path: '/v1/files/abc?purpose=batch&x=1',
      headers: { 'x-custom': 'Keep-Case', 'content-type': 'application/octet-stream', 'content-length': '7' },
    });
    expect(echo.headers).not.toHaveProperty('connection');
    expect(Buffer.from(echo.body_base64, 'base64')).toEqual(bytes);
  });

  it('serves n bytes of 0..255 from /v1/binary/n', async () => {
    const { mock } = await start();
    const res = await fetch(`${mock.baseUrl}/binary/300`);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('x-mock-header')).toBe('yes');
    const body = Buffer.from(await res.arrayBuffer());
    expect(body).toHaveLength(300);
    expect([body[0], body[255], body[256], body[299]]).toEqual([0, 255, 0, 43]);
  });

  it('records nothing with record: false', async () => {
    const { mock, client } = await start({ record: false });
    await client.models.list();
    expect(mock.requests).toEqual([]);
  });
});
