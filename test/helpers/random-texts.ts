import { seededRandom } from '../../scripts/bench/seeded-random.js';

/**
 * `count` texts of up to `maxParts` pieces each, drawn from `pieces`: the same texts on every
 * run, so that an input a comparison fails on can be replayed.
 */
export function randomTexts(seed: number, count: number, pieces: readonly string[], maxParts: number): string[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, () => {
    let text = '';
    for (let n = Math.floor(next() * (maxParts + 1)); n > 0; n--) text += pieces[Math.floor(next() * pieces.length)];
    return text;
  });
}
