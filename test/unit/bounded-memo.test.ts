import { describe, expect, it } from 'vitest';
import { boundedMemo } from '../../src/lib/bounded-memo.js';

describe('boundedMemo', () => {
  it('works a key out once, and starts afresh past its bound so that a repeated key comes back', () => {
    const seen: string[] = [];
    const length = boundedMemo(2, (key) => {
      seen.push(key);
      return { length: key.length };
    });
    const first = length('a');
    expect(length('a')).toBe(first);
    length('bb');
    length('bb');
    // A third key: the memory starts again with it alone.
    expect(length('ccc')).toEqual({ length: 3 });
    length('ccc');
    length('a');
    length('a');
    expect(seen).toEqual(['a', 'bb', 'ccc', 'a']);
  });

  it('does not remember a key whose computation threw', () => {
    let calls = 0;
    const parse = boundedMemo(10, (key) => {
      calls++;
      if (key === 'bad') throw new Error('bad key');
      return key.toUpperCase();
    });
    expect(() => parse('bad')).toThrow('bad key');
    expect(() => parse('bad')).toThrow('bad key');
    expect(parse('ok')).toBe('OK');
    expect(parse('ok')).toBe('OK');
    expect(calls).toBe(3);
  });
});
