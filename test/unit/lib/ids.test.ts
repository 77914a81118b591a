import { describe, expect, it } from 'vitest';
import { isUuid, newTimeOrderedId } from '../../../src/lib/ids.js';

describe('newTimeOrderedId', () => {
  it('makes version-7 UUIDs that sort by time', () => {
    const early = newTimeOrderedId(Date.parse('2026-01-01T00:00:00Z'));
    const late = newTimeOrderedId(Date.parse('2026-01-01T00:00:00.001Z'));
    expect(isUuid(early)).toBe(true);
    expect(early.charAt(14)).toBe('7');
    expect(['8', '9', 'a', 'b']).toContain(early.charAt(19));
    expect(early < late).toBe(true);
    expect(newTimeOrderedId()).not.toBe(newTimeOrderedId());
  });
});
