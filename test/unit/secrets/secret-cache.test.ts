import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../../src/lib/clock.js';
import { createSecretCache, REFRESH_FLOOR_MS } from '../../../src/secrets/secret-cache.js';
import type { SecretManagers } from '../../../src/secrets/secret-managers.js';
import type { SecretTarget } from '../../../src/secrets/types.js';

function managerHolding(initial: string) {
  let value = initial;
  let reads = 0;
  let release: (() => void) | null = null;
  const managers: SecretManagers = {
    read: async () => {
      reads++;
      if (release === null) return value;
      await new Promise<void>((resolve) => (release = resolve));
      return value;
    },
    write: async () => undefined,
  };
  return {
    managers,
    set: (next: string) => (value = next),
    reads: () => reads,
    hold: () => (release = () => undefined),
    releaseAll: () => release?.(),
  };
}

const target = (version = 'v1'): SecretTarget => ({
  referenceId: 'ref-1',
  slug: 'ref',
  version,
  managerType: 'hashicorp_vault',
  auth: { vault_auth_type: 'token', vault_addr: 'https://vault', vault_token: 't' },
  secretPath: 'secret/x',
});

describe('secret cache', () => {
  it('reads once per TTL, and again at once for a new version of the reference', async () => {
    const clock = createManualClock();
    const manager = managerHolding('a');
    const cache = createSecretCache({ managers: manager.managers, clock, ttlMs: 60_000 });
    expect((await cache.get(target())).value).toBe('a');
    manager.set('b');
    clock.advance(59_999);
    expect((await cache.get(target())).value).toBe('a');
    clock.advance(1);
    expect((await cache.get(target())).value).toBe('b');
    manager.set('c');
    expect((await cache.get(target('v2'))).value).toBe('c');
    expect(manager.reads()).toBe(3);
  });

  it('shares one read between concurrent callers', async () => {
    const clock = createManualClock();
    const manager = managerHolding('a');
    const cache = createSecretCache({ managers: manager.managers, clock });
    manager.hold();
    const both = Promise.all([cache.get(target()), cache.get(target())]);
    await Promise.resolve();
    manager.releaseAll();
    const [first, second] = await both;
    expect(first).toBe(second);
    expect(manager.reads()).toBe(1);
  });

  it('refreshes a refused value after the floor, and hands over what another request already read', async () => {
    const clock = createManualClock();
    const manager = managerHolding('a');
    const cache = createSecretCache({ managers: manager.managers, clock });
    const seen = await cache.get(target());
    manager.set('b');
    expect(await cache.refresh(target(), seen)).toBe(seen);
    expect(manager.reads()).toBe(1);
    clock.advance(REFRESH_FLOOR_MS);
    const fresh = await cache.refresh(target(), seen);
    expect(fresh.value).toBe('b');
    // A second request refused with the old value gets the new one without another read.
    expect(await cache.refresh(target(), seen)).toBe(fresh);
    expect(manager.reads()).toBe(2);
  });

  it('keeps no failure: the next call reads again', async () => {
    const clock = createManualClock();
    let fail = true;
    const cache = createSecretCache({
      managers: {
        read: () => (fail ? Promise.reject(new Error('down')) : Promise.resolve('ok')),
        write: async () => undefined,
      },
      clock,
    });
    await expect(cache.get(target())).rejects.toThrow('down');
    fail = false;
    expect((await cache.get(target())).value).toBe('ok');
  });
});
