import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createResponseCache,
  type CacheLimits,
  type CacheRequest,
  type CachedResponse,
} from '../../src/cache/index.js';
import { createManualClock } from '../../src/lib/clock.js';
import { migrateToLatest, openSqlite, type Db } from '../../src/storage/database.js';
import { createLogger } from '../../src/telemetry/logger.js';

const DIMENSIONS = 32;
const logger = createLogger({ level: 'silent', pretty: false });

/** Unit vector along axis 0 tilted by `tilt` towards axis `towards`: cos to axis 0 = 1/√(1+tilt²). */
const tilted = (tilt: number, towards = 1): number[] =>
  Array.from({ length: DIMENSIONS }, (_, i) => (i === 0 ? 1 : i === towards ? tilt : 0));

/** Vectors the mock model returns per input text; other texts get an axis of their own. */
const VECTORS: Record<string, number[]> = {
  'What is the capital of France?': tilted(0),
  "What's the capital of France?": tilted(0.2), // cos ≈ 0.981
  'Name the capital city of France': tilted(0.1, 2), // cos ≈ 0.995
  'Is Paris big?': tilted(0.6), // cos ≈ 0.857
};

/**
 * A loopback OpenAI-compatible `POST /v1/embeddings` that answers in the real wire shape with
 * the vectors above, and 500 for the text 'fail'.
 */
async function startEmbeddingsMock() {
  const requests: Array<{ url: string; headers: IncomingHttpHeaders; body: { model?: string; input?: unknown } }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string; input?: unknown };
      requests.push({ url: req.url ?? '', headers: req.headers, body });
      if (req.method !== 'POST' || req.url !== '/v1/embeddings' || body.input === 'fail') {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              message: 'The server had an error while processing your request.',
              type: 'server_error',
              param: null,
              code: null,
            },
          }),
        );
        return;
      }
      const text = String(body.input);
      const axis = 3 + (Object.keys(requests).length % (DIMENSIONS - 3));
      const embedding = VECTORS[text] ?? Array.from({ length: DIMENSIONS }, (_, i) => (i === axis ? 1 : 0));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: [{ object: 'embedding', embedding, index: 0 }],
          model: body.model,
          usage: { prompt_tokens: 7, total_tokens: 7 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests };
}

async function setup(options: { withEmbeddings?: boolean; threshold?: number; limits?: Partial<CacheLimits> } = {}) {
  const mock = await startEmbeddingsMock();
  const dataDir = mkdtempSync(join(tmpdir(), 'svcgw-semcache-'));
  const dbs: Db[] = [];
  const caches: Array<ReturnType<typeof createResponseCache>> = [];
  onTestFinished(async () => {
    for (const cache of caches) await cache.stop();
    for (const db of dbs) await db.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const config = {
    cache_purge_interval_ms: 60_000,
    semantic_cache_threshold: options.threshold ?? 0.95,
    semantic_cache_embedding_url: options.withEmbeddings === false ? undefined : mock.baseUrl,
    semantic_cache_embedding_api_key: 'emb-key-123',
    semantic_cache_embedding_model: 'text-embedding-3-small',
  };
  const clock = createManualClock();
  const open = () => {
    const db = openSqlite(dataDir);
    dbs.push(db);
    const cache = createResponseCache({
      db,
      clock,
      config,
      logger,
      ...(options.limits ? { limits: options.limits } : {}),
    });
    caches.push(cache);
    return cache;
  };
  const db = openSqlite(dataDir);
  dbs.push(db);
  await migrateToLatest(db);
  return { mock, clock, cache: open(), open, dbs };
}

const SYSTEM = { role: 'system', content: 'You are terse.' };

function chat(
  messages: unknown[],
  extra: Partial<CacheRequest> = {},
  body: Record<string, unknown> = {},
): CacheRequest {
  return {
    organisationId: 'org-1',
    workspaceId: 'ws-1',
    namespace: null,
    endpoint: '/v1/chat/completions',
    route: 'config:c1@1',
    body: { model: 'gpt-4o-mini', messages, ...body },
    ...extra,
  };
}
const ask = (question: string, extra: Partial<CacheRequest> = {}, body: Record<string, unknown> = {}) =>
  chat([SYSTEM, { role: 'user', content: question }], extra, body);

const answer = (text: string): CachedResponse => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify({ text })),
  stream: false,
});
const SEMANTIC = { mode: 'semantic' as const, maxAgeSeconds: 3600 };

describe('response cache, semantic mode', () => {
  it('answers a question of the same meaning above the threshold, with the similarity', async () => {
    const { cache, mock } = await setup();
    const miss = await cache.lookup(ask('What is the capital of France?'), SEMANTIC);
    expect(miss.status).toBe('MISS');
    miss.store(answer('Paris'));
    await Promise.resolve();

    const hit = await cache.lookup(ask("What's the capital of France?"), SEMANTIC);
    expect(hit.status).toBe('SEMANTIC_HIT');
    expect(hit.hit?.response.body.toString()).toContain('Paris');
    expect(hit.hit?.similarity).toBeCloseTo(1 / Math.sqrt(1.04), 5);

    // The embedding call: the configured model, the last user message as input, the key as a bearer token.
    expect(mock.requests[0]).toMatchObject({
      url: '/v1/embeddings',
      body: { model: 'text-embedding-3-small', input: 'What is the capital of France?' },
    });
    expect(mock.requests[0]!.headers.authorization).toBe('Bearer emb-key-123');
  });

  it('answers an exact repeat without calling the embedding model', async () => {
    const { cache, mock } = await setup();
    (await cache.lookup(ask('What is the capital of France?'), SEMANTIC)).store(answer('Paris'));
    await Promise.resolve();
    const calls = mock.requests.length;
    expect((await cache.lookup(ask('What is the capital of France?'), SEMANTIC)).status).toBe('HIT');
    expect(mock.requests).toHaveLength(calls);
  });

  it('misses below the threshold', async () => {
    const { cache } = await setup();
    (await cache.lookup(ask('What is the capital of France?'), SEMANTIC)).store(answer('Paris'));
    await Promise.resolve();
    expect((await cache.lookup(ask('Is Paris big?'), SEMANTIC)).status).toBe('MISS');
  });

  it('picks the most similar of several entries', async () => {
    const { cache } = await setup({ threshold: 0.9 });
    (await cache.lookup(ask("What's the capital of France?"), SEMANTIC)).store(answer('tilted 0.2'));
    // Similar to the first at this threshold: only a forced refresh stores it.
    (await cache.lookup(ask('Name the capital city of France'), { ...SEMANTIC, forceRefresh: true })).store(
      answer('tilted 0.1'),
    );
    await waitUntil(() => cache.stats.indexedEntries === 2);
    const hit = await cache.lookup(ask('What is the capital of France?'), SEMANTIC);
    expect(hit.status).toBe('SEMANTIC_HIT');
    expect(hit.hit?.response.body.toString()).toContain('tilted 0.1');
  });

  it('misses when an earlier turn, a parameter, the namespace or the workspace differs', async () => {
    const { cache } = await setup();
    (await cache.lookup(ask('What is the capital of France?'), SEMANTIC)).store(answer('Paris'));
    await Promise.resolve();
    const similar = "What's the capital of France?";
    const variants: CacheRequest[] = [
      chat([
        { role: 'system', content: 'You are verbose.' },
        { role: 'user', content: similar },
      ]),
      chat([
        SYSTEM,
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'user', content: similar },
      ]),
      ask(similar, {}, { temperature: 0.5 }),
      ask(similar, { namespace: 'other' }),
      ask(similar, { workspaceId: 'ws-2' }),
      ask(similar, { organisationId: 'org-2' }),
    ];
    for (const variant of variants) expect((await cache.lookup(variant, SEMANTIC)).status).toBe('MISS');
    expect((await cache.lookup(ask(similar), SEMANTIC)).status).toBe('SEMANTIC_HIT');
  });

  it('matches exactly only when the last message is not plain user text', async () => {
    const { cache, mock } = await setup();
    const image = {
      role: 'user',
      content: [
        { type: 'text', text: 'What is the capital of France?' },
        { type: 'image_url', image_url: { url: 'https://example.test/a.png' } },
      ],
    };
    (await cache.lookup(chat([SYSTEM, image]), SEMANTIC)).store(answer('Paris'));
    expect(mock.requests).toHaveLength(0);
    expect((await cache.lookup(chat([SYSTEM, image]), SEMANTIC)).status).toBe('HIT');
  });

  it('honours max_age for semantic hits', async () => {
    const { cache, clock } = await setup();
    (await cache.lookup(ask('What is the capital of France?'), { mode: 'semantic', maxAgeSeconds: 60 })).store(
      answer('Paris'),
    );
    await Promise.resolve();
    clock.advance(61_000);
    expect(
      (await cache.lookup(ask("What's the capital of France?"), { mode: 'semantic', maxAgeSeconds: 600 })).status,
    ).toBe('MISS');
  });

  it('finds entries of an earlier process once their partition loads from SQLite', async () => {
    const { cache, open } = await setup();
    (await cache.lookup(ask('What is the capital of France?'), SEMANTIC)).store(answer('Paris'));
    await Promise.resolve();
    await cache.stop();
    const restarted = open();
    const hit = await restarted.lookup(ask("What's the capital of France?"), SEMANTIC);
    expect(hit.status).toBe('SEMANTIC_HIT');
    expect(restarted.stats.indexedEntries).toBe(1);
  });

  it('loads a partition page by page, entries with equal timestamps included', async () => {
    const { cache, open } = await setup({ limits: { partitionPageSize: 4 } });
    for (let i = 0; i < 10; i++)
      (await cache.lookup(ask(`question ${i}`), { ...SEMANTIC, forceRefresh: true })).store(answer(`answer ${i}`));
    await waitUntil(() => cache.stats.pendingWrites === 10);
    await cache.stop();
    const restarted = open();
    expect((await restarted.lookup(ask('What is the capital of France?'), SEMANTIC)).status).toBe('MISS');
    expect(restarted.stats.indexedEntries).toBe(10);
    expect(restarted.stats.indexedPartitions).toBe(1);
  });

  it('goes on as a miss when the database fails', async () => {
    const { cache, dbs } = await setup();
    await dbs[1]!.destroy();
    const lookup = await cache.lookup(ask('What is the capital of France?'), SEMANTIC);
    expect(lookup.status).toBe('MISS');
    expect(() => lookup.store(answer('x'))).not.toThrow();
  });

  it('stores the embedding of a force-refreshed answer so that it answers semantically', async () => {
    const { cache, mock } = await setup();
    const refresh = await cache.lookup(ask('What is the capital of France?'), { ...SEMANTIC, forceRefresh: true });
    expect(refresh.status).toBe('REFRESH');
    refresh.store(answer('Paris, fresh'));
    await waitUntil(() => cache.stats.pendingWrites === 1);
    expect(mock.requests).toHaveLength(1);
    expect(
      (await cache.lookup(ask("What's the capital of France?"), SEMANTIC)).hit?.response.body.toString(),
    ).toContain('fresh');
  });

  it('goes on as a miss when the embedding model fails, and still caches exactly', async () => {
    const { cache } = await setup();
    const miss = await cache.lookup(ask('fail'), SEMANTIC);
    expect(miss.status).toBe('MISS');
    miss.store(answer('x'));
    await Promise.resolve();
    expect((await cache.lookup(ask('fail'), SEMANTIC)).status).toBe('HIT');
  });

  it('falls back to exact matching without an embedding URL', async () => {
    const { cache, mock } = await setup({ withEmbeddings: false });
    expect(cache.semanticEnabled).toBe(false);
    (await cache.lookup(ask('What is the capital of France?'), SEMANTIC)).store(answer('Paris'));
    expect((await cache.lookup(ask("What's the capital of France?"), SEMANTIC)).status).toBe('MISS');
    expect((await cache.lookup(ask('What is the capital of France?'), SEMANTIC)).status).toBe('HIT');
    expect(mock.requests).toHaveLength(0);
  });

  it('forgets purged entries in memory too', async () => {
    const { cache, clock } = await setup();
    (await cache.lookup(ask('What is the capital of France?'), { mode: 'semantic', maxAgeSeconds: 60 })).store(
      answer('Paris'),
    );
    await Promise.resolve();
    expect((await cache.lookup(ask("What's the capital of France?"), SEMANTIC)).status).toBe('SEMANTIC_HIT');
    expect(cache.stats.indexedEntries).toBe(1);
    clock.advance(61_000);
    expect(await cache.purgeExpired()).toBe(1);
    expect(cache.stats.indexedEntries).toBe(0);
  });
});

/** Polls a condition on the event loop (no wall-clock assertion: it only waits for work to settle). */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}
