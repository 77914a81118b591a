import { describe, expect, it } from 'vitest';
import { testWithin } from '../../../src/guardrails/safe-regex.js';

describe('patterns on the worker', () => {
  it('answers like RegExp.test, with flags', async () => {
    expect(await testWithin('^pa', 'paris')).toBe(true);
    expect(await testWithin('^PA', 'paris')).toBe(false);
    expect(await testWithin('^PA', 'paris', 100, 'i')).toBe(true);
  });

  it('stops a runaway pattern, and the tests waiting behind it still get their answers', async () => {
    const runaway = testWithin('^(a+)+$', `${'a'.repeat(40)}!`, 100);
    const behind = [testWithin('b', 'abc', 2_000), testWithin('z', 'abc', 2_000)];
    await expect(runaway).rejects.toThrow(/ran longer than 100 ms/);
    expect(await Promise.all(behind)).toEqual([true, false]);
    // The replaced worker serves the next test.
    expect(await testWithin('c$', 'abc')).toBe(true);
  });

  it('reports a pattern that does not compile as an error, not as a verdict', async () => {
    await expect(testWithin('(', 'abc')).rejects.toThrow(/Invalid regular expression/);
  });
});
