import { rangeCheck } from './range-check.js';

/** Characters: Unicode code points, so an emoji counts once. */
export function countCharacters(text: string): number {
  // As `[...text].length` without the array: a surrogate pair is one code point, a lone surrogate one too.
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

export const characterCount = rangeCheck(
  'default.characterCount',
  'characters',
  { min: 'minCharacters', max: 'maxCharacters' },
  { max: 9_999_999 },
  countCharacters,
);
