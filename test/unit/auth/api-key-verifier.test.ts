import { describe, expect, it } from 'vitest';
import { createApiKeyVerifier, generateRawKey, hashKey } from '../../../src/auth/api-key-service.js';
import type { ApiKeyRepository, ApiKeyWithRoles } from '../../../src/storage/repositories/api-keys.js';

/** One stored key, as the repository returns it; the verifier only calls the lookup by hash. */
function storeWith(raw: string) {
  const row = {
    id: 'key-1',
    key_hash: hashKey(raw),
    previous_key_hash: null,
    previous_key_expires_at: null,
    status: 'active',
    expires_at: null,
    type: 'workspace',
    organisation_id: 'org-1',
    workspace_id: 'ws-1',
    user_id: null,
    org_role: null,
    workspace_role: null,
    workspace_status: 'active',
    scopes: '["completions.write"]',
    rate_limits: null,
    usage_limits: null,
    defaults: null,
    created_at: '2026-11-24T00:00:00.000Z',
    name: 'bench',
  } as unknown as ApiKeyWithRoles;
  const lookups: string[] = [];
  const repo = {
    findByAnyHashWithRoles: (hash: string) => {
      lookups.push(hash);
      return Promise.resolve(hash === row.key_hash ? { ...row } : undefined);
    },
  } as unknown as ApiKeyRepository;
  return { row, repo, lookups };
}

describe('API key verifier', () => {
  it('refuses a revoked key at once, although its hash was remembered', async () => {
    const raw = generateRawKey();
    const store = storeWith(raw);
    const verifier = createApiKeyVerifier({ repo: store.repo, clock: { now: () => 0 }, ttlMs: 60_000 });
    expect((await verifier.verify(raw)).ok).toBe(true);
    expect((await verifier.verify(raw)).ok).toBe(true);
    expect(store.lookups).toEqual([hashKey(raw)]); // the second request read no database

    store.row.status = 'revoked';
    verifier.invalidate('key-1');
    expect(await verifier.verify(raw)).toEqual({ ok: false, reason: 'revoked' });
    expect(store.lookups).toEqual([hashKey(raw), hashKey(raw)]);
  });

  it('answers unknown for a key that differs in one character from a remembered one', async () => {
    const raw = generateRawKey();
    const store = storeWith(raw);
    const verifier = createApiKeyVerifier({ repo: store.repo, clock: { now: () => 0 }, ttlMs: 60_000 });
    expect((await verifier.verify(raw)).ok).toBe(true);
    const other = `${raw.slice(0, -1)}${raw.endsWith('A') ? 'B' : 'A'}`;
    expect(await verifier.verify(other)).toEqual({ ok: false, reason: 'unknown' });
  });

  it('answers a cached key without a promise, and refuses it once its expiry passes on the clock', async () => {
    const raw = generateRawKey();
    const store = storeWith(raw);
    store.row.expires_at = new Date(10_000).toISOString();
    let now = 0;
    const verifier = createApiKeyVerifier({ repo: store.repo, clock: { now: () => now }, ttlMs: 60_000 });
    const first = verifier.verify(raw);
    expect(first).toBeInstanceOf(Promise); // not cached yet: read from the repository
    expect((await first).ok).toBe(true);
    const cached = verifier.verify(raw);
    expect(cached).not.toBeInstanceOf(Promise);
    expect(cached).toMatchObject({ ok: true, principal: { keyId: 'key-1' } });

    now = 10_000;
    expect(verifier.verify(raw)).toEqual({ ok: false, reason: 'expired' });
    expect(store.lookups).toEqual([hashKey(raw)]); // the expiry was checked on the cached entry
  });

  it('reads the key again once its cache entry is older than the TTL', async () => {
    const raw = generateRawKey();
    const store = storeWith(raw);
    let now = 0;
    const verifier = createApiKeyVerifier({ repo: store.repo, clock: { now: () => now }, ttlMs: 60_000 });
    expect((await verifier.verify(raw)).ok).toBe(true);
    store.row.status = 'revoked'; // by another instance, whose bus message this one missed
    now = 59_999;
    expect((await verifier.verify(raw)).ok).toBe(true);
    now = 60_000;
    const reread = verifier.verify(raw);
    expect(reread).toBeInstanceOf(Promise);
    expect(await reread).toEqual({ ok: false, reason: 'revoked' });
    expect(store.lookups).toEqual([hashKey(raw), hashKey(raw)]);
  });

  it('refuses a previous secret once its transition ends, on the cached entry', async () => {
    const oldRaw = generateRawKey();
    const store = storeWith(generateRawKey());
    store.row.previous_key_hash = hashKey(oldRaw);
    store.row.previous_key_expires_at = new Date(5_000).toISOString();
    const repo = {
      findByAnyHashWithRoles: (hash: string) =>
        Promise.resolve(hash === store.row.previous_key_hash ? { ...store.row } : undefined),
    } as unknown as ApiKeyRepository;
    let now = 0;
    const verifier = createApiKeyVerifier({ repo, clock: { now: () => now }, ttlMs: 60_000 });
    expect((await verifier.verify(oldRaw)).ok).toBe(true);
    now = 5_000;
    expect(verifier.verify(oldRaw)).toEqual({ ok: false, reason: 'rotated' });
  });
});
