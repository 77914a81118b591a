import { describe, expect, it } from 'vitest';
import { isoAt } from '../../../src/lib/clock.js';

describe('isoAt', () => {
  it('gives the ISO stamp of every millisecond asked, repeated or not', () => {
    const asked = [0, 0, 1, 1, 0, 1_795_000_000_123, 1_795_000_000_123, 1_795_000_000_124, -1, 1.9, 1];
    for (const ms of asked) expect(isoAt(ms)).toBe(new Date(ms).toISOString());
  });

  it('throws on a time that has no stamp, as Date does, and goes on after it', () => {
    expect(() => isoAt(Number.NaN)).toThrow(RangeError);
    expect(() => isoAt(8.64e15 + 1)).toThrow(RangeError);
    expect(isoAt(5)).toBe('1970-01-01T00:00:00.005Z');
  });
});
