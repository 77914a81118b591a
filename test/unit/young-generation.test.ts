import { describe, expect, it } from 'vitest';
import { growthFactorFor, youngGenerationChosen } from '../../src/server/young-generation.js';

const MB = 1024 * 1024;

describe('the young-generation cap of svcgw serve', () => {
  it('lets V8 double the generation while the double fits under the cap, and stops it there', () => {
    expect(growthFactorFor(1 * MB, 16 * MB)).toBe(2);
    expect(growthFactorFor(8 * MB, 16 * MB)).toBe(2);
    expect(growthFactorFor(12 * MB, 16 * MB)).toBe(1);
    expect(growthFactorFor(16 * MB, 16 * MB)).toBe(1);
    // Grown past the cap before it applied: no further.
    expect(growthFactorFor(32 * MB, 16 * MB)).toBe(1);
  });

  it('applies when the operator sized nothing', () => {
    expect(youngGenerationChosen([], undefined)).toBe(false);
    expect(youngGenerationChosen(['--enable-source-maps'], '--max-old-space-size=512 --heap-growing-percent=0')).toBe(
      false,
    );
  });

  it("leaves the operator's own young-generation flags alone, on the command line or in NODE_OPTIONS", () => {
    expect(youngGenerationChosen(['--max-semi-space-size=32'], undefined)).toBe(true);
    expect(youngGenerationChosen(['--max_semi_space_size', '8'], '')).toBe(true);
    expect(youngGenerationChosen([], '--trace-warnings --semi-space-growth-factor=4')).toBe(true);
    expect(youngGenerationChosen([], '--max-young-generation-size=48')).toBe(true);
  });
});
