import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { duration, durationMs, futureTimeAt, pastTimeAt } from '../../../src/cli/durations.js';

const NOW = Date.parse('2026-03-10T12:00:00.000Z');

describe('CLI durations', () => {
  it('reads 30s, 30m, 1h, 7d, 2w and 500ms', () => {
    expect(durationMs('30s')).toBe(30_000);
    expect(durationMs('30m')).toBe(1_800_000);
    expect(durationMs('1h')).toBe(3_600_000);
    expect(durationMs('1.5h')).toBe(5_400_000);
    expect(durationMs('7d')).toBe(604_800_000);
    expect(durationMs('2w')).toBe(1_209_600_000);
    expect(durationMs('500ms')).toBe(500);
  });

  it('refuses what is not a duration with a hint', () => {
    for (const bad of ['1', 'h', '1x', '-1h', '1 day', '', '1e3s']) expect(durationMs(bad)).toBeUndefined();
    expect(() => duration('soon')).toThrow(InvalidArgumentError);
    expect(() => duration('soon')).toThrow(/30m, 1h or 7d/);
  });

  it('--since 1h is an hour ago; an ISO time is kept; a bare number is refused', () => {
    expect(pastTimeAt('1h', NOW)).toBe('2026-03-10T11:00:00.000Z');
    expect(pastTimeAt('7d', NOW)).toBe('2026-03-03T12:00:00.000Z');
    expect(pastTimeAt('2026-01-31T00:00:00+01:00', NOW)).toBe('2026-01-30T23:00:00.000Z');
    expect(pastTimeAt('2026-01-31', NOW)).toBe('2026-01-31T00:00:00.000Z');
    expect(() => pastTimeAt('7', NOW)).toThrow(/that long ago/);
    expect(() => pastTimeAt('yesterday', NOW)).toThrow(InvalidArgumentError);
  });

  it('an expiry of 30d is thirty days from now', () => {
    expect(futureTimeAt('30d', NOW)).toBe('2026-04-09T12:00:00.000Z');
    expect(futureTimeAt('2027-01-01T00:00:00Z', NOW)).toBe('2027-01-01T00:00:00.000Z');
    expect(() => futureTimeAt('later', NOW)).toThrow(/from now/);
  });
});
