import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../../src/lib/clock.js';
import { createLoadingCache } from '../../../src/lib/loading-cache.js';

/** A load the test finishes when it wants, to place a clear() while it is in flight. */
function heldLoad<V>(value: V) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { load: async () => (await gate, value), release };
}

describe('createLoadingCache', () => {
  it('keeps a loaded value for its TTL, then loads again', async () => {
    const clock = createManualClock(Date.parse('2026-11-23T00:00:00Z'));
    const cache = createLoadingCache<string>({ clock, ttlMs: 5_000 });
    let loads = 0;
    const load = () => Promise.resolve(`v${++loads}`);
    expect(await cache.get('a', load)).toBe('v1');
    clock.advance(4_999);
    expect(await cache.get('a', load)).toBe('v1');
    clock.advance(1);
    expect(await cache.get('a', load)).toBe('v2');
  });

  it('does not keep what a load read when a change cleared the cache while it ran', async () => {
    const clock = createManualClock(Date.parse('2026-11-23T00:00:00Z'));
    const cache = createLoadingCache<string>({ clock, ttlMs: 60_000 });
    const stale = heldLoad('before the change');
    const answer = cache.get('policy', stale.load);
    cache.clear(); // the change's notification arrives while the row is being read
    stale.release();
    expect(await answer).toBe('before the change'); // its caller still gets an answer
    expect(await cache.get('policy', () => Promise.resolve('after the change'))).toBe('after the change');
  });

  it('does not remember a failed load', async () => {
    const clock = createManualClock(0);
    const cache = createLoadingCache<string>({ clock, ttlMs: 60_000 });
    await expect(cache.get('a', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.get('a', () => Promise.resolve('up'))).toBe('up');
  });

  it('peeks at a kept value only while it is fresh, and at nothing a clear() dropped', async () => {
    const clock = createManualClock(0);
    const cache = createLoadingCache<string>({ clock, ttlMs: 1_000 });
    expect(cache.peek('a')).toBeUndefined();
    await cache.get('a', () => Promise.resolve('v1'));
    expect(cache.peek('a')).toBe('v1');
    clock.advance(1_000);
    expect(cache.peek('a')).toBeUndefined();
    await cache.get('a', () => Promise.resolve('v2'));
    cache.clear();
    expect(cache.peek('a')).toBeUndefined();
  });
});
