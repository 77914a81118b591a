import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';

describe('gateway: OpenAI-compatible routes through the official client', () => {
  it('relays a chat completion and logs it with provider, model, tokens, cost, trace id and metadata', async () => {
    const g = await startGateway();
    const client = g.openai({
      ...g.viaMock,
      'x-service-trace-id': 'trace-abc',
      'x-service-metadata': JSON.stringify({ team: 'ml', user: 'u1' }),
    });
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello there' }] })
      .withResponse();
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message.content).toMatch(/^Hello from mock/);
    expect(response.headers.get('x-service-trace-id')).toBe('trace-abc');
    expect(response.headers.get('x-request-id')).toBeTruthy();

    const upstream = g.mock.requests[0]!;
    expect(upstream.url).toBe('/v1/chat/completions');
    expect(upstream.headers.authorization).toBe('Bearer provider-secret-key');
    expect(Object.keys(upstream.headers).filter((h) => h.startsWith('x-service-'))).toEqual([]);

    const [log] = await g.logs(1);
    expect(log).toMatchObject({
      provider: 'openai',
      credential_source: 'custom_host',
      model: 'gpt-4o',
      endpoint_type: 'chatComplete',
      method: 'POST',
      path: '/v1/chat/completions',
      status_code: 200,
      is_success: true,
      stream: false,
      trace_id: 'trace-abc',
      metadata: { team: 'ml', user: 'u1' },
      prompt_tokens: completion.usage!.prompt_tokens,
      completion_tokens: completion.usage!.completion_tokens,
      total_tokens: completion.usage!.total_tokens,
      cost_currency: 'USD',
      workspace_id: g.server.bootstrap.workspaceId,
    });
    // gpt-4o: $2.50 / $10 per million tokens.
    expect(log.cost).toBeCloseTo(
      (completion.usage!.prompt_tokens * 2.5 + completion.usage!.completion_tokens * 10) / 1e6,
      12,
    );
    expect(log.latency_ms).toBeGreaterThan(0);
    expect(log.ttfb_ms).toBeGreaterThan(0);
    expect(JSON.stringify(await g.admin.get(`/v1/logs/${log.id}`))).not.toContain('provider-secret-key');
  });

  it('streams chat chunk by chunk: the client sees the first chunk while the provider is still writing', async () => {
    const g = await startGateway({ mock: { holdStream: true, streamChunks: 4 } });
    const stream = await g.openai().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    expect(first.value.choices[0].delta.role).toBe('assistant');
    g.mock.releaseStreams(); // the provider has only sent its first chunk until now
    const rest: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value);
    expect(rest.map((c) => c.choices[0]?.delta.content ?? '').join('')).toMatch(/^Hello from mock/);
    // The gateway asked the provider for usage; the client did not, so it gets no usage-only chunk.
    expect(rest.every((c) => c.choices.length > 0)).toBe(true);
    expect((g.mock.requests[0]!.json as any).stream_options).toEqual({ include_usage: true });

    const [log] = await g.logs(1);
    expect(log).toMatchObject({
      stream: true,
      status_code: 200,
      prompt_tokens: expect.any(Number),
      completion_tokens: 4,
      total_tokens: expect.any(Number),
    });
    expect(log.cost).toBeGreaterThan(0);
  });

  it('passes the usage chunk through when the client asked for it, and ends with [DONE]', async () => {
    const g = await startGateway();
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-service-api-key': g.adminKey, 'content-type': 'application/json', ...g.viaMock },
      body: JSON.stringify({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await res.text();
    const events = text.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const usageChunk = JSON.parse(events.at(-2)!.slice('data: '.length));
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage.total_tokens).toBeGreaterThan(0);
    const [log] = await g.logs(1);
    expect(log.total_tokens).toBe(usageChunk.usage.total_tokens);
  });

  it('relays completions, embeddings, rerank, images, speech, moderations and responses', async () => {
    const g = await startGateway();
    const client = g.openai();
    const completion = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi' });
    expect(completion.object).toBe('text_completion');
    const embeddings = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
      encoding_format: 'float',
    });
    expect(embeddings.data).toHaveLength(2);
    expect(embeddings.data[0]!.embedding).toHaveLength(8);
    const images = await client.images.generate({ model: 'gpt-image-1', prompt: 'a cat' });
    expect(images.data?.length).toBeGreaterThan(0);
    const moderation = await client.moderations.create({ input: 'FLAG this' });
    expect(moderation.results[0]!.flagged).toBe(true);
    const response = await client.responses.create({ model: 'gpt-4o', input: 'hello' });
    expect(response.output_text).toMatch(/Hello from mock/);

    const speech = await client.audio.speech.create({ model: 'tts-1', input: 'hello', voice: 'alloy' });
    const audio = Buffer.from(await speech.arrayBuffer());
    const direct = Buffer.from(
      await (
        await fetch(`${g.mock.baseUrl}/audio/speech`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'tts-1', input: 'hello', voice: 'alloy' }),
        })
      ).arrayBuffer(),
    );
    expect(audio.equals(direct)).toBe(true);

    const rerankBody = JSON.stringify({
      model: 'rerank-v3.5',
      query: 'q',
      documents: ['a', 'b', 'c'],
      top_n: 2,
      return_documents: true,
    });
    const rerank = await fetch(`${g.baseUrl}/v1/rerank`, {
      method: 'POST',
      headers: {
        'x-service-api-key': g.adminKey,
        'content-type': 'application/json',
        ...g.viaMock,
        'x-service-provider': 'together-ai',
      },
      body: rerankBody,
    });
    const viaGateway = (await rerank.json()) as { results: unknown[] };
    expect(viaGateway.results).toHaveLength(2);
    expect(g.mock.requests.at(-1)!.body.toString()).toBe(rerankBody);

    const logs = await g.logs(7);
    expect(logs.map((l: any) => l.endpoint_type).sort()).toEqual([
      'complete',
      'createModelResponse',
      'createSpeech',
      'embed',
      'imageGenerate',
      'moderate',
      'rerank',
    ]);
    const embedLog = logs.find((l: any) => l.endpoint_type === 'embed');
    expect(embedLog).toMatchObject({ model: 'text-embedding-3-small', prompt_tokens: embeddings.usage.prompt_tokens });
    expect(embedLog.cost).toBeCloseTo((embeddings.usage.prompt_tokens * 0.02) / 1e6, 12);
  });

  it("lists models from the provider with a provider header, and the key's stored providers' models without one", async () => {
    const g = await startGateway();
    const fromProvider = await g.openai().models.list();
    expect(fromProvider.data.length).toBeGreaterThan(0);
    expect(g.mock.requests.at(-1)!.url).toBe('/v1/models');
    expect((await g.admin.get('/v1/models')).body).toEqual({ object: 'list', data: [] }); // nothing stored yet
    await g.admin.post('/v1/integrations', { name: 'Main', slug: 'main', ai_provider_id: 'openai', key: 'sk-x' });
    const local = await g.admin.get('/v1/models');
    expect(local.status).toBe(200);
    expect(local.body.data).toContainEqual(
      expect.objectContaining({ id: '@main/gpt-4o', object: 'model', owned_by: 'openai' }),
    );
    expect(g.mock.requests).toHaveLength(1);
  });

  it('forwards unknown body fields untouched', async () => {
    const g = await startGateway();
    const body = {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
      brand_new_param: { nested: [1, 2] },
      reasoning_effort: 'low',
    };
    await g.openai().chat.completions.create(body as any);
    expect(g.mock.requests[0]!.json).toEqual(body);
  });
});
