import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }] };

function send(g: GatewayHarness, config: unknown, body: unknown = chat, headers: Record<string, string> = {}) {
  return fetch(`${g.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'x-service-api-key': g.adminKey,
      'content-type': 'application/json',
      'x-service-config': JSON.stringify(config),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const simple = (g: GatewayHarness, maxAge = 60) => ({
  cache: { mode: 'simple', max_age: maxAge },
  provider: 'openai',
  custom_host: g.mock.baseUrl,
  api_key: 'sk-k',
});

describe('simple cache', () => {
  it('answers a repeated request from the cache, says so in a header, and logs the hit with zero cost', async () => {
    const g = await startGateway();
    const first = await send(g, simple(g));
    expect(first.headers.get('x-service-cache-status')).toBe('MISS');
    const firstBody = await first.json();
    // Same request with its keys in another order: the normalised request matches.
    const second = await send(g, simple(g), { messages: chat.messages, model: chat.model });
    expect(second.status).toBe(200);
    expect(second.headers.get('x-service-cache-status')).toBe('HIT');
    expect(await second.json()).toEqual(firstBody);
    expect(g.mock.requests).toHaveLength(1);

    const logs = await g.logs(2);
    const hit = logs.find((l: { cache_status: string }) => l.cache_status === 'HIT');
    const miss = logs.find((l: { cache_status: string }) => l.cache_status === 'MISS');
    expect(hit).toMatchObject({ cost: 0, is_success: true, status_code: 200 });
    expect(miss.cost).toBeGreaterThan(0);
  });

  it('expires entries after max_age, on the gateway’s clock', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const g = await startGateway({ clock });
    expect((await send(g, simple(g, 60))).headers.get('x-service-cache-status')).toBe('MISS');
    clock.advance(59_000);
    expect((await send(g, simple(g, 60))).headers.get('x-service-cache-status')).toBe('HIT');
    clock.advance(2_000);
    expect((await send(g, simple(g, 60))).headers.get('x-service-cache-status')).toBe('MISS');
    expect(g.mock.requests).toHaveLength(2);
  });

  it('keeps namespaces apart, refreshes on request, and never caches a failure', async () => {
    const g = await startGateway();
    await send(g, simple(g), chat, { 'x-service-cache-namespace': 'team-a' });
    expect(
      (await send(g, simple(g), chat, { 'x-service-cache-namespace': 'team-b' })).headers.get('x-service-cache-status'),
    ).toBe('MISS');
    expect(
      (await send(g, simple(g), chat, { 'x-service-cache-namespace': 'team-a' })).headers.get('x-service-cache-status'),
    ).toBe('HIT');
    expect((await send(g, simple(g))).headers.get('x-service-cache-status')).toBe('MISS'); // the default namespace is its own
    expect(g.mock.requests).toHaveLength(3);

    const refreshed = await send(g, simple(g), chat, {
      'x-service-cache-namespace': 'team-a',
      'x-service-cache-force-refresh': 'true',
    });
    expect(refreshed.headers.get('x-service-cache-status')).toBe('REFRESH');
    expect(g.mock.requests).toHaveLength(4);

    const other = { ...chat, messages: [{ role: 'user', content: 'Fail please' }] };
    g.mock.behave({ kind: 'error', status: 500 }, { times: 1 });
    expect((await send(g, simple(g), other)).status).toBe(500);
    const retried = await send(g, simple(g), other);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('x-service-cache-status')).toBe('MISS');
  });

  it('caches a streamed answer and replays it as a stream', async () => {
    const g = await startGateway();
    const body = { ...chat, stream: true };
    const first = await (await send(g, simple(g), body)).text();
    const replay = await send(g, simple(g), body);
    expect(replay.headers.get('x-service-cache-status')).toBe('HIT');
    expect(replay.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await replay.text();
    expect(text).toBe(first);
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(g.mock.requests).toHaveLength(1);
    // A JSON request does not meet the streamed entry.
    expect((await send(g, simple(g))).headers.get('x-service-cache-status')).toBe('MISS');
  });

  it('with no cache in the config, says DISABLED nowhere and logs DISABLED', async () => {
    const g = await startGateway();
    const res = await send(g, { provider: 'openai', custom_host: g.mock.baseUrl, api_key: 'k' });
    expect(res.headers.get('x-service-cache-status')).toBeNull();
    const [log] = await g.logs(1);
    expect(log.cache_status).toBe('DISABLED');
  });
});

/** An OpenAI-shaped embeddings server whose vectors the test chooses: texts about France point one way, others another. */
async function startEmbeddings() {
  const inputs: string[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const { input, model } = JSON.parse(raw) as { input: string | string[]; model: string };
      const texts = Array.isArray(input) ? input : [input];
      inputs.push(...texts);
      const vector = (text: string) =>
        /france/i.test(text) ? [1, 0.02, 0, 0] : /joke/i.test(text) ? [0, 1, 0, 0] : [0, 0, 1, 0];
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          object: 'list',
          data: texts.map((t, index) => ({ object: 'embedding', index, embedding: vector(t) })),
          model,
          usage: { prompt_tokens: 5, total_tokens: 5 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, inputs };
}

describe('semantic cache', () => {
  it('answers a differently worded question of the same meaning, but only when the earlier turns match', async () => {
    const embeddings = await startEmbeddings();
    const g = await startGateway({
      env: { SVCGW_SEMANTIC_CACHE_EMBEDDING_URL: embeddings.url, SVCGW_SEMANTIC_CACHE_THRESHOLD: '0.9' },
    });
    const config = {
      cache: { mode: 'semantic', max_age: 600 },
      provider: 'openai',
      custom_host: g.mock.baseUrl,
      api_key: 'k',
    };
    const ask = (content: string, earlier: Array<{ role: string; content: string }> = []) =>
      send(g, config, { model: 'gpt-4o-mini', messages: [...earlier, { role: 'user', content }] });

    expect((await ask('What is the capital of France?')).headers.get('x-service-cache-status')).toBe('MISS');
    const similar = await ask("Tell me France's capital city");
    expect(similar.headers.get('x-service-cache-status')).toBe('SEMANTIC_HIT');
    expect(g.mock.requests).toHaveLength(1);

    expect((await ask('Tell me a joke')).headers.get('x-service-cache-status')).toBe('MISS'); // below the threshold
    const history = [{ role: 'system', content: 'You answer in French.' }];
    expect((await ask('What is the capital of France?', history)).headers.get('x-service-cache-status')).toBe('MISS'); // earlier turns differ
    expect(g.mock.requests).toHaveLength(3);
    expect(embeddings.inputs.length).toBeGreaterThanOrEqual(3);

    const logs = await g.logs(4);
    expect(logs.filter((l: { cache_status: string }) => l.cache_status === 'SEMANTIC_HIT')).toHaveLength(1);
  });
});

describe('cache savings', () => {
  it('records what each hit saved, the price of the provider call it replaced, and the hit-rate graph sums it in cents', async () => {
    const clock = createManualClock(Date.parse('2026-03-01T10:15:00Z'));
    const embeddings = await startEmbeddings();
    const g = await startGateway({
      clock,
      env: { SVCGW_SEMANTIC_CACHE_EMBEDDING_URL: embeddings.url, SVCGW_SEMANTIC_CACHE_THRESHOLD: '0.9' },
    });
    const semantic = { ...simple(g, 7200), cache: { mode: 'semantic', max_age: 7200 } };
    const ask = (config: unknown, content: string) =>
      send(g, config, { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

    expect((await send(g, simple(g, 7200))).headers.get('x-service-cache-status')).toBe('MISS');
    expect((await send(g, simple(g, 7200))).headers.get('x-service-cache-status')).toBe('HIT');
    clock.advance(3_600_000); // the next hour's bucket
    expect((await send(g, simple(g, 7200))).headers.get('x-service-cache-status')).toBe('HIT');
    expect((await ask(semantic, 'What is the capital of Italy?')).headers.get('x-service-cache-status')).toBe('MISS');
    expect((await ask(semantic, "Tell me Italy's capital city")).headers.get('x-service-cache-status')).toBe(
      'SEMANTIC_HIT',
    );
    expect(g.mock.requests).toHaveLength(2);

    const logs = await g.logs(5);
    const misses = logs.filter((l: { cache_status: string }) => l.cache_status === 'MISS');
    const [simpleCost, semanticCost] = [misses.at(-1).cost, misses[0].cost] as [number, number];
    expect(simpleCost).toBeGreaterThan(0);
    // Hits still cost nothing.
    expect(logs.filter((l: { cache_status: string }) => l.cache_status !== 'MISS').map((l: any) => l.cost)).toEqual([
      0, 0, 0,
    ]);

    const graph = await fetch(
      `${g.baseUrl}/v1/analytics/graphs/cache/hit-rate?time_of_generation_min=2026-03-01T10:00:00Z&time_of_generation_max=2026-03-01T11:59:59Z&interval=hour`,
      { headers: { 'x-service-api-key': g.adminKey } },
    );
    const body = (await graph.json()) as { summary: unknown; data_points: unknown[] };
    expect(body.summary).toEqual({ total: 3, rate: 60, rate_fraction: 0.6 });
    // Money keeps 12 significant digits in analytics answers.
    const usd = (value: number) => Number(value.toPrecision(12));
    const cents = (value: number) => usd(value * 100);
    expect(body.data_points).toEqual([
      expect.objectContaining({
        simple_hits: 1,
        semantic_hits: 0,
        cumulative_simple_cache_savings: cents(simpleCost),
        cumulative_simple_cache_savings_usd: usd(simpleCost),
        cumulative_semantic_cache_savings: 0,
        cumulative_semantic_cache_savings_usd: 0,
      }),
      // Cumulative: the first hour's saving carries on.
      expect.objectContaining({
        simple_hits: 1,
        semantic_hits: 1,
        cumulative_simple_cache_savings: cents(2 * simpleCost),
        cumulative_simple_cache_savings_usd: usd(2 * simpleCost),
        cumulative_semantic_cache_savings: cents(semanticCost),
        cumulative_semantic_cache_savings_usd: usd(semanticCost),
      }),
    ]);
  });
});
