import { describe, expect, it } from 'vitest';
import { judgeRss, verdictLine } from '../../scripts/soak-verdict.js';

/** RSS every 5 s for `minutes`: a sawtooth from `floor` up by `tooth` MB every 60 s, the floor rising `leakPerMin`. */
function soak(minutes: number, floor: number, tooth: number, leakPerMin: number) {
  return Array.from({ length: minutes * 12 }, (_, i) => {
    const atS = i * 5;
    return { atS, mb: floor + leakPerMin * (atS / 60) + tooth * ((atS % 60) / 60) };
  });
}

describe('the soak verdict', () => {
  it('calls a sawtooth flat even when the run ends at the top of a tooth', () => {
    // Means over halves would differ by up to a whole tooth here, depending on where the run stops.
    const samples = soak(10, 200, 60, 0).slice(0, 12 * 10 - 1);
    const verdict = judgeRss(samples, 30)!;
    expect(verdict.grew).toBe(false);
    expect(verdict.floorLast - verdict.floorFirst).toBeCloseTo(0, 5);
    expect(verdictLine(samples, 30)).toMatch(/^RSS after warm-up flat: /);
  });

  it('calls a rising floor under the sawtooth growth, with its slope', () => {
    const samples = soak(10, 200, 60, 2);
    const verdict = judgeRss(samples, 30)!;
    expect(verdict.grew).toBe(true);
    expect(verdict.slopeMbPer10Min).toBeGreaterThan(15);
    expect(verdictLine(samples, 30)).toMatch(/^RSS after warm-up GREW: /);
  });

  it('names the figure it judges', () => {
    const samples = soak(10, 20, 0, 0);
    expect(verdictLine(samples, 30, 'memory outside the V8 heap')).toMatch(
      /^memory outside the V8 heap after warm-up flat: /,
    );
  });

  it('needs enough samples to judge', () => {
    expect(judgeRss(soak(1, 200, 0, 0).slice(0, 5), 30)).toBeNull();
    expect(verdictLine([], 30)).toMatch(/too few samples/);
  });
});
