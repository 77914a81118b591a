import { rangeCheck } from './range-check.js';

/**
 * Sentences: pieces of text ending in . ! ? … (or a line break, or the end) that contain a
 * letter or a digit. An abbreviation followed by a space ("p.m. today") ends a sentence;
 * this is a guardrail, not a parser.
 */
export const countSentences = (text: string) =>
  text.split(/(?<=[.!?…])\s+|[\r\n]+/).filter((piece) => /[\p{L}\p{N}]/u.test(piece)).length;

export const sentenceCount = rangeCheck(
  'default.sentenceCount',
  'sentences',
  { min: 'minSentences', max: 'maxSentences' },
  { max: 99_999 },
  countSentences,
);
