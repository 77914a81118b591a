import { rangeCheck } from './range-check.js';

/** Words: whitespace-separated tokens with at least one letter or digit ("—" and "!!" are not words). */
export const countWords = (text: string) => text.split(/\s+/).filter((token) => /[\p{L}\p{N}]/u.test(token)).length;

export const wordCount = rangeCheck(
  'default.wordCount',
  'words',
  { min: 'minWords', max: 'maxWords' },
  { max: 99_999 },
  countWords,
);
