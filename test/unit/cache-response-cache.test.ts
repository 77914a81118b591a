import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  cacheResponseHeaders,
  createResponseCache,
  replaySse,
  type CacheRequest,
  type CachedResponse,
} from '../../src/cache/index.js';
import { createManualClock } from '../../src/lib/clock.js';
import { migrateToLatest, openSqlite, type Db } from '../../src/storage/database.js';
import { createLogger } from '../../src/telemetry/logger.js';

const SETTINGS = {
  cache_purge_interval_ms: 60_000,
  semantic_cache_threshold: 0.95,
  semantic_cache_embedding_url: undefined,
  semantic_cache_embedding_api_key: undefined,
  semantic_cache_embedding_model: 'text-embedding-3-small',
};
const logger = createLogger({ level: 'silent', pretty: false });

/** A migrated SQLite file in a temp dir; every database and cache opened on it is closed after the test. */
async function setup() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcgw-cache-'));
  const dbs: Db[] = [];
  const caches: Array<ReturnType<typeof createResponseCache>> = [];
  onTestFinished(async () => {
    for (const cache of caches) await cache.stop();
    for (const db of dbs) await db.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const clock = createManualClock();
  const db = openSqlite(dataDir);
  dbs.push(db);
  await migrateToLatest(db);
  const open = (on: Db = db) => {
    const cache = createResponseCache({ db: on, clock, config: SETTINGS, logger });
    caches.push(cache);
    return cache;
  };
  const reopenDb = () => {
    const another = openSqlite(dataDir);
    dbs.push(another);
    return another;
  };
  return { db, clock, cache: open(), open, reopenDb };
}

function chat(content: string, extra: Partial<CacheRequest> = {}, body: Record<string, unknown> = {}): CacheRequest {
  return {
    organisationId: 'org-1',
    workspaceId: 'ws-1',
    namespace: null,
    endpoint: '/v1/chat/completions',
    route: 'provider:openai@api.openai.com',
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...body },
    ...extra,
  };
}

function answer(text: string, overrides: Partial<CachedResponse> = {}): CachedResponse {
  return {
    status: 200,
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer sk-secret',
      'set-cookie': 'a=b',
      'x-request-id': 'req-1',
    },
    body: Buffer.from(
      JSON.stringify({
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: text } }],
      }),
    ),
    stream: false,
    ...overrides,
  };
}

const SIMPLE = { mode: 'simple' as const, maxAgeSeconds: 3600 };

describe('response cache, simple mode', () => {
  it('misses, stores, then hits with the same status and body and only the body headers', async () => {
    const { cache, clock } = await setup();
    const first = await cache.lookup(chat('hello'), SIMPLE);
    expect(first.status).toBe('MISS');
    first.store(answer('hi there'));

    clock.advance(5_000);
    const second = await cache.lookup(chat('hello'), SIMPLE);
    expect(second.status).toBe('HIT');
    expect(second.hit?.response.status).toBe(200);
    expect(second.hit?.response.body.toString()).toContain('hi there');
    expect(second.hit?.response.headers).toEqual({ 'content-type': 'application/json' });
    expect(second.hit?.ageSeconds).toBe(5);
    expect(second.hit?.similarity).toBeNull();
    expect(cacheResponseHeaders(second)).toEqual({ 'x-service-cache-status': 'HIT', age: '5' });
    expect(cacheResponseHeaders(first)).toEqual({ 'x-service-cache-status': 'MISS' });
  });

  it('matches whatever the order of the body keys, and not when a value differs', async () => {
    const { cache } = await setup();
    (await cache.lookup(chat('hello', {}, { temperature: 0 }), SIMPLE)).store(answer('x'));
    const reordered: CacheRequest = {
      ...chat('hello'),
      body: { temperature: 0, messages: [{ content: 'hello', role: 'user' }], model: 'gpt-4o-mini' },
    };
    expect((await cache.lookup(reordered, SIMPLE)).status).toBe('HIT');
    expect((await cache.lookup(chat('hello', {}, { temperature: 1 }), SIMPLE)).status).toBe('MISS');
    expect((await cache.lookup(chat('hello', {}, { temperature: 0, stream: true }), SIMPLE)).status).toBe('MISS');
    expect((await cache.lookup(chat('hello', { route: 'config:abc@2' }, { temperature: 0 }), SIMPLE)).status).toBe(
      'MISS',
    );
  });

  it('caches a streamed answer and replays it as the same events', async () => {
    const { cache } = await setup();
    const events = [
      'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n',
      'data: {"choices":[{"index":0,"delta":{"content":"lo"}}]}\n\n',
      'data: [DONE]\n\n',
    ];
    const streamed = chat('hello', {}, { stream: true });
    (await cache.lookup(streamed, SIMPLE)).store({
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8' },
      body: Buffer.from(events.join('')),
      stream: true,
    });
    cache.flush();
    const hit = await cache.lookup(streamed, SIMPLE);
    expect(hit.hit?.response.stream).toBe(true);
    expect(hit.hit?.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const replayed: string[] = [];
    for await (const piece of replaySse(hit.hit!.response.body)) replayed.push(String(piece));
    expect(replayed).toEqual(events);
  });

  it('reports DISABLED and stores nothing without cache options', async () => {
    const { cache } = await setup();
    const lookup = await cache.lookup(chat('hello'), null);
    expect(lookup.status).toBe('DISABLED');
    lookup.store(answer('x'));
    expect((await cache.lookup(chat('hello'), SIMPLE)).status).toBe('MISS');
  });

  it('honours max_age: the stored one and a shorter one asked for at lookup', async () => {
    const { cache, clock } = await setup();
    (await cache.lookup(chat('hello'), { mode: 'simple', maxAgeSeconds: 60 })).store(answer('x'));
    clock.advance(30_000);
    expect((await cache.lookup(chat('hello'), { mode: 'simple', maxAgeSeconds: 60 })).status).toBe('HIT');
    expect((await cache.lookup(chat('hello'), { mode: 'simple', maxAgeSeconds: 20 })).status).toBe('MISS');
    clock.advance(30_000);
    expect((await cache.lookup(chat('hello'), { mode: 'simple', maxAgeSeconds: 600 })).status).toBe('MISS');
  });

  it('keeps namespaces apart', async () => {
    const { cache } = await setup();
    (await cache.lookup(chat('hello', { namespace: 'team-a' }), SIMPLE)).store(answer('for a'));
    expect((await cache.lookup(chat('hello', { namespace: 'team-b' }), SIMPLE)).status).toBe('MISS');
    expect((await cache.lookup(chat('hello'), SIMPLE)).status).toBe('MISS');
    expect((await cache.lookup(chat('hello', { namespace: 'team-a' }), SIMPLE)).status).toBe('HIT');
  });

  it('never lets another organisation or workspace see an entry, in memory or on disk', async () => {
    const { cache } = await setup();
    (await cache.lookup(chat('hello'), SIMPLE)).store(answer('private'));
    const others: Array<Partial<CacheRequest>> = [
      { organisationId: 'org-2' },
      { workspaceId: 'ws-2' },
      { workspaceId: null },
    ];
    for (const other of others) expect((await cache.lookup(chat('hello', other), SIMPLE)).status).toBe('MISS');
    cache.flush();
    for (const other of others) expect((await cache.lookup(chat('hello', other), SIMPLE)).status).toBe('MISS');
    expect((await cache.lookup(chat('hello'), SIMPLE)).status).toBe('HIT');
  });

  it('force refresh skips the lookup, then the fresh answer replaces the old one', async () => {
    const { cache } = await setup();
    (await cache.lookup(chat('hello'), SIMPLE)).store(answer('old'));
    cache.flush();
    const refresh = await cache.lookup(chat('hello'), { ...SIMPLE, forceRefresh: true });
    expect(refresh.status).toBe('REFRESH');
    expect(refresh.hit).toBeNull();
    refresh.store(answer('new'));
    const hit = await cache.lookup(chat('hello'), SIMPLE);
    expect(hit.hit?.response.body.toString()).toContain('new');
    cache.flush();
    expect((await cache.lookup(chat('hello'), SIMPLE)).hit?.response.body.toString()).toContain('new');
  });

  it('caches only 2xx answers within the body limit, and no stream that ended in an error', async () => {
    const { cache, db, clock } = await setup();
    (await cache.lookup(chat('a'), SIMPLE)).store(answer('x', { status: 429 }));
    (await cache.lookup(chat('b'), SIMPLE)).store(answer('x', { body: Buffer.alloc(1024 * 1024 + 1, 0x20) }));
    const broken = Buffer.from(
      'data: {"id":"1","choices":[]}\n\ndata: {"error":{"message":"boom","type":"api_error","param":null,"code":"UPSTREAM_STREAM_ERROR"}}\n\n',
    );
    (await cache.lookup(chat('c', {}, { stream: true }), SIMPLE)).store({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: broken,
      stream: true,
    });
    for (const [text, body] of [
      ['a', {}],
      ['b', {}],
      ['c', { stream: true }],
    ] as const) {
      expect((await cache.lookup(chat(text, {}, body), SIMPLE)).status).toBe('MISS');
    }
    const small = createResponseCache({ db, clock, config: SETTINGS, logger, limits: { maxBodyBytes: 10 } });
    (await small.lookup(chat('d'), SIMPLE)).store(answer('longer than ten bytes'));
    expect((await small.lookup(chat('d'), SIMPLE)).status).toBe('MISS');
    await small.stop();
  });

  it('stores a miss only once and hits after a restart, from the SQLite file', async () => {
    const { cache, open, reopenDb } = await setup();
    const miss = await cache.lookup(chat('hello'), SIMPLE);
    miss.store(answer('first'));
    miss.store(answer('second'));
    expect(cache.stats.pendingWrites).toBe(1);
    await cache.stop();
    expect(cache.stats.pendingWrites).toBe(0);
    const restarted = open(reopenDb());
    const hit = await restarted.lookup(chat('hello'), SIMPLE);
    expect(hit.status).toBe('HIT');
    expect(hit.hit?.response.body.toString()).toContain('first');
  });

  it('purges only expired rows', async () => {
    const { cache, db, clock } = await setup();
    (await cache.lookup(chat('short'), { mode: 'simple', maxAgeSeconds: 60 })).store(answer('x'));
    (await cache.lookup(chat('long'), { mode: 'simple', maxAgeSeconds: 3600 })).store(answer('y'));
    clock.advance(61_000);
    expect(await cache.purgeExpired()).toBe(1);
    const rows = await db.selectFrom('cache_entries').select(['expires_at']).execute();
    expect(rows).toHaveLength(1);
    expect(Date.parse(rows[0]!.expires_at)).toBe(clock.now() - 61_000 + 3_600_000);
    expect((await cache.lookup(chat('long'), SIMPLE)).status).toBe('HIT');
    expect(await cache.purgeExpired()).toBe(0);
  });

  it('keeps at most maxStoredEntries rows, dropping those closest to expiry', async () => {
    const { db, clock } = await setup();
    const cache = createResponseCache({ db, clock, config: SETTINGS, logger, limits: { maxStoredEntries: 2 } });
    for (const [text, age] of [
      ['a', 100],
      ['b', 300],
      ['c', 200],
    ] as const)
      (await cache.lookup(chat(text), { mode: 'simple', maxAgeSeconds: age })).store(answer(text));
    expect(await cache.purgeExpired()).toBe(1);
    expect((await cache.lookup(chat('a'), SIMPLE)).status).toBe('MISS');
    expect((await cache.lookup(chat('b'), SIMPLE)).status).toBe('HIT');
    await cache.stop();
  });
});
