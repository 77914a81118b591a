import { describe, expect, it } from 'vitest';
import { lazy, lazyModule, lazyService } from '../../../src/lib/lazy.js';

describe('lazy', () => {
  it('loads on the first call only, and every call gets the same value', async () => {
    let loads = 0;
    const get = lazy(async () => ({ n: ++loads }));
    expect(loads).toBe(0);
    const [a, b] = await Promise.all([get(), get()]);
    expect(a).toBe(b);
    expect(await get()).toBe(a);
    expect(loads).toBe(1);
  });

  it('does not keep a failed load: the call that failed rejects, the next one loads again', async () => {
    let loads = 0;
    const get = lazy(async () => {
      loads += 1;
      if (loads === 1) throw new Error('cannot load');
      return 'loaded';
    });
    await expect(get()).rejects.toThrow('cannot load');
    expect(await get()).toBe('loaded');
    expect(loads).toBe(2);
  });
});

describe('lazyModule', () => {
  it('has nothing loaded before the first call, and the loaded value at hand after it', async () => {
    let loads = 0;
    const mod = lazyModule(async () => ({ n: ++loads }));
    expect(mod.loaded()).toBeUndefined();
    const pending = mod();
    expect(mod.loaded()).toBeUndefined(); // still loading
    const value = await pending;
    expect(mod.loaded()).toBe(value);
    expect(await mod()).toBe(value);
    expect(loads).toBe(1);
  });

  it('keeps nothing of a failed load: loaded() stays undefined and the next call loads again', async () => {
    let loads = 0;
    const mod = lazyModule(async () => {
      loads += 1;
      if (loads === 1) throw new Error('cannot import');
      return 'module';
    });
    await expect(mod()).rejects.toThrow('cannot import');
    expect(mod.loaded()).toBeUndefined();
    expect(await mod()).toBe('module');
    expect(mod.loaded()).toBe('module');
    expect(loads).toBe(2);
  });
});

describe('lazyService', () => {
  it('creates the service on the first call of a method, not before, and once', async () => {
    let created = 0;
    const service = lazyService(async () => {
      created += 1;
      let count = 0;
      return {
        add: async (n: number) => (count += n),
        total: async () => count,
      };
    });
    expect(created).toBe(0);
    await Promise.all([service.add(2), service.add(3)]);
    expect(await service.total()).toBe(5);
    expect(created).toBe(1);
  });

  it("gives a method's rejection as it was", async () => {
    const error = new Error('not found');
    const service = lazyService(async () => ({
      find: async (): Promise<string> => {
        throw error;
      },
    }));
    await expect(service.find()).rejects.toBe(error);
  });

  it('rejects a call when the service cannot be created, and creates it at the next call', async () => {
    let attempts = 0;
    const service = lazyService(async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('module missing');
      return { ping: async () => 'pong' };
    });
    await expect(service.ping()).rejects.toThrow('module missing');
    expect(await service.ping()).toBe('pong');
  });

  it('is not a promise: awaiting it gives the service itself', async () => {
    const service = lazyService(async () => ({ ping: async () => 'pong' }));
    const awaited = await Promise.resolve(service);
    expect(awaited).toBe(service);
    expect(await awaited.ping()).toBe('pong');
  });
});
