import { rangeCheck } from './range-check.js';

/** Characters: Unicode code points, so an emoji counts once. */
export const countCharacters = (text: string) => [...text].length;

export const characterCount = rangeCheck(
  'default.characterCount',
  'characters',
  { min: 'minCharacters', max: 'maxCharacters' },
  { max: 9_999_999 },
  countCharacters,
);
