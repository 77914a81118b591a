import { describe, expect, it } from 'vitest';
import {
  COLLECTIONS_AFTER_ACTIVITY,
  IDLE_HEAP_GROWTH_BYTES,
  IDLE_UTILISATION,
  idleStep,
} from '../../src/server/idle-collector.js';

const idle = { utilisation: 0, heapGrowth: 0 };
const busy = { utilisation: 0.5, heapGrowth: 40 * 1024 * 1024 };

/** The collections a run of intervals makes, starting as the server does (owing collections for its start-up). */
function collections(samples: Array<{ utilisation: number; heapGrowth: number }>): boolean[] {
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

  it('counts an interval as busy on either event-loop time or heap growth', () => {
    expect(idleStep(0, { utilisation: IDLE_UTILISATION, heapGrowth: 0 })).toEqual({ collect: false, owed: 2 });
    expect(idleStep(2, { utilisation: 0, heapGrowth: IDLE_HEAP_GROWTH_BYTES })).toEqual({ collect: false, owed: 2 });
    // A collection V8 made on its own shrinks the heap: that is not activity.
    expect(idleStep(1, { utilisation: 0.001, heapGrowth: -5_000_000 })).toEqual({ collect: true, owed: 0 });
  });
});
