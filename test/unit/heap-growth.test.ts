import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from '../../src/server/heap-growth.js';

describe('the heap growth svcgw serve sets', () => {
  it('limits old-generation growth when the operator chose nothing', () => {
    expect(heapGrowthFlag([], undefined)).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(heapGrowthFlag(['--enable-source-maps'], '--max-old-space-size=512')).toBe('--heap-growing-percent=50');
  });

  it("leaves the operator's own value alone, 0 (V8's choice) included", () => {
    expect(heapGrowthFlag(['--heap-growing-percent=0'], undefined)).toBeNull();
    expect(heapGrowthFlag(['--heap_growing_percent=200'], '')).toBeNull();
    expect(heapGrowthFlag([], '--trace-warnings --heap-growing-percent=30')).toBeNull();
  });
});
