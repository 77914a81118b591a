import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  COLLECTIONS_AFTER_ACTIVITY,
  exposedGc,
  IDLE_HEAP_GROWTH_BYTES,
  IDLE_UTILISATION,
  idleStep,
  type IdleSample,
} from '../../src/server/idle-collector.js';

const idle = { utilisation: 0, heapGrowth: 0, collections: 0 };
const busy = { utilisation: 0.5, heapGrowth: 40 * 1024 * 1024, collections: 12 };

/** The collections a run of intervals makes, starting as the server does (owing collections for its start-up). */
function collections(samples: IdleSample[]): boolean[] {
  let owed = COLLECTIONS_AFTER_ACTIVITY;
  return samples.map((sample) => {
    const step = idleStep(owed, sample);
    owed = step.owed;
    return step.collect;
  });
}

describe('the idle collector of svcgw serve', () => {
  it('collects twice once start-up is over, then never while the server stays idle', () => {
    expect(collections([idle, idle, idle, idle, idle])).toEqual([true, true, false, false, false]);
  });

  it('never collects while the server is busy, and twice again once it is idle', () => {
    expect(collections([busy, busy, busy, idle, idle, idle, busy, idle, idle, idle])).toEqual([
      false,
      false,
      false,
      true,
      true,
      false,
      false,
      true,
      true,
      false,
    ]);
  });

  it('counts an interval as busy on event-loop time, heap growth or a collection of V8 its own', () => {
    expect(idleStep(0, { ...idle, utilisation: IDLE_UTILISATION })).toEqual({ collect: false, owed: 2 });
    expect(idleStep(2, { ...idle, heapGrowth: IDLE_HEAP_GROWTH_BYTES })).toEqual({ collect: false, owed: 2 });
    // Light traffic: little loop time, and the heap smaller after V8's scavenge, but not idle.
    expect(idleStep(1, { utilisation: 0.005, heapGrowth: -5_000_000, collections: 1 })).toEqual({
      collect: false,
      owed: 2,
    });
    expect(idleStep(1, { utilisation: 0.005, heapGrowth: 200_000, collections: 0 })).toEqual({
      collect: true,
      owed: 0,
    });
  });
});

describe("the idle collector's gc()", () => {
  it('is a real full collection, without --expose-gc', async () => {
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    const gc = exposedGc();
    // Made in a function of its own, so that nothing in this one keeps the target alive.
    const ref = ((): WeakRef<object> => new WeakRef({ payload: new Array(1000).fill(1) }))();
    // A WeakRef holds its target until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(ref.deref()).toBeUndefined();
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    // Contexts made later get no gc global.
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
