import { describe, expect, it } from 'vitest';
import { dot, hammingCutoff, normalise, popcount32, sketch, SKETCH_WORDS } from '../../src/cache/vector-sketch.js';

/** Deterministic pseudo-random numbers (a linear congruential generator) so that the test never flakes. */
function numbers(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
}

function randomUnit(next: () => number, dimension: number): Float32Array {
  return normalise(Array.from({ length: dimension }, next))!;
}

/** A unit vector at exactly cosine `cos` to `base`. */
function atCosine(base: Float32Array, cos: number, next: () => number): Float32Array {
  const noise = randomUnit(next, base.length);
  const along = dot(noise, base);
  const orthogonal = normalise(noise.map((v, i) => v - along * base[i]!))!;
  const sin = Math.sqrt(1 - cos * cos);
  return normalise(base.map((v, i) => cos * v + sin * orthogonal[i]!))!;
}

const hamming = (a: Uint32Array, b: Uint32Array) => {
  let d = 0;
  for (let w = 0; w < SKETCH_WORDS; w++) d += popcount32(a[w]! ^ b[w]!);
  return d;
};

describe('vector sketches', () => {
  it('counts bits', () => {
    expect(popcount32(0)).toBe(0);
    expect(popcount32(0xffffffff)).toBe(32);
    expect(popcount32(0x80000001)).toBe(2);
  });

  it('is the same for a vector and its multiples, and normalise refuses the zero vector', () => {
    const v = randomUnit(numbers(1), 1536);
    expect(sketch(v)).toEqual(sketch(normalise(v.map((x) => x * 3))!));
    expect(normalise([0, 0])).toBeNull();
  });

  it('keeps vectors at the threshold within the cut-off and unrelated ones far beyond it (dimension 1536)', () => {
    const next = numbers(42);
    const cutoff = hammingCutoff(0.95);
    let worstNear = 0;
    let closestFar = 256;
    for (let i = 0; i < 200; i++) {
      const base = randomUnit(next, 1536);
      worstNear = Math.max(worstNear, hamming(sketch(base), sketch(atCosine(base, 0.95, next))));
      closestFar = Math.min(closestFar, hamming(sketch(base), sketch(atCosine(base, 0.3, next))));
    }
    expect(worstNear).toBeLessThanOrEqual(cutoff);
    expect(closestFar).toBeGreaterThan(cutoff);
  });

  it('has a cut-off that grows as the threshold drops', () => {
    expect(hammingCutoff(1)).toBeLessThan(hammingCutoff(0.95));
    expect(hammingCutoff(0.95)).toBeLessThan(hammingCutoff(0.8));
    expect(hammingCutoff(-1)).toBe(256);
  });
});
