/**
 * Pattern-and-checksum PII detection: no model, no network, linear-time patterns. What each
 * category recognises (and misses) is listed in docs/guardrails.md.
 */
import { isIPv6 } from 'node:net';
import { isAsciiAlphanumeric } from '../../lib/ascii.js';

export const PII_CATEGORIES = ['EMAIL_ADDRESS', 'PHONE_NUMBER', 'CREDIT_CARD', 'IBAN', 'SSN', 'IP_ADDRESS'] as const;
export type PiiCategory = (typeof PII_CATEGORIES)[number];

export interface PiiSpan {
  start: number;
  end: number;
  category: PiiCategory;
}

/** Luhn checksum over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** ISO 13616 check: the country code and check digits moved to the end, letters as numbers, mod 97 = 1. */
export function ibanValid(raw: string): boolean {
  const iban = raw.replace(/ /g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const value = ch >= 'A' ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48;
    remainder = value > 9 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

interface Detector {
  category: PiiCategory;
  /** The matches' `[start, end)`, in text order; linear in the text's length. */
  find: (text: string) => Iterable<readonly [number, number]>;
}

/**
 * The matches of a global `pattern` that `accept` takes. Every pattern given here is bounded in
 * length, so that searching for it stays linear.
 */
const byPattern = (pattern: RegExp, accept?: (match: string) => boolean) =>
  function* matches(text: string): Generator<readonly [number, number]> {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      if (match[0].length === 0) pattern.lastIndex++; // never loop on an empty match
      if (accept && !accept(match[0])) continue;
      yield [match.index, match.index + match[0].length];
    }
  };

const digitsOf = (s: string) => s.replace(/\D/g, '');

/** An address's domain, tried right after an `@` only. */
const EMAIL_DOMAIN = /[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b/y;

/** A character of an address's local part: A-Z a-z 0-9 . _ % + - */
function isLocalPartChar(code: number): boolean {
  return isAsciiAlphanumeric(code) || code === 46 || code === 95 || code === 37 || code === 43 || code === 45;
}

/**
 * The matches `/[A-Za-z0-9._%+-]+@<EMAIL_DOMAIN>/g` has, found from each `@` outwards. That
 * pattern, searched for, tries every start in a run of local-part characters and reads the run
 * to its end from each: 80 KB of letters without an `@` held the event loop for 2.8 s. Here a
 * local part is the run before an `@` (not reaching back into the previous match), and the
 * domain is tried once per `@`.
 */
function* emailAddresses(text: string): Generator<readonly [number, number]> {
  let previousEnd = 0;
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > previousEnd && isLocalPartChar(text.charCodeAt(start - 1))) start--;
    if (start === at) continue;
    EMAIL_DOMAIN.lastIndex = at + 1;
    if (!EMAIL_DOMAIN.test(text)) continue;
    previousEnd = EMAIL_DOMAIN.lastIndex;
    yield [start, previousEnd];
  }
}

/** In priority order: where two overlap, the earlier detector keeps the text. */
const DETECTORS: readonly Detector[] = [
  { category: 'EMAIL_ADDRESS', find: emailAddresses },
  { category: 'IBAN', find: byPattern(/\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}\b/g, ibanValid) },
  {
    category: 'CREDIT_CARD',
    find: byPattern(/\b\d(?:[ -]?\d){12,18}\b/g, (m) => {
      const digits = digitsOf(m);
      return digits.length >= 13 && digits.length <= 19 && luhnValid(digits);
    }),
  },
  // US Social Security numbers, written NNN-NN-NNNN, without the numbers never issued.
  { category: 'SSN', find: byPattern(/\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/g) },
  {
    category: 'IP_ADDRESS',
    find: byPattern(/\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b/g),
  },
  {
    category: 'IP_ADDRESS',
    find: byPattern(
      /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g,
      (m) => isIPv6(m) && /[0-9A-Fa-f]/.test(m),
    ),
  },
  {
    // International (+…), an area code in parentheses, or North American 3-3-4.
    category: 'PHONE_NUMBER',
    find: byPattern(
      /(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}|\(\d{2,4}\)[ .-]?\d{2,4}(?:[ .-]?\d{2,4}){1,3}|\d{3}[.-]\d{3}[.-]\d{4})(?!\w)/g,
      (m) => {
        const n = digitsOf(m).length;
        return n >= 8 && n <= 15;
      },
    ),
  },
];

/**
 * The PII spans of `text` in the categories asked for, in text order, never overlapping. Each
 * detector's matches come in text order, so one pass over the spans found so far (sorted, apart)
 * tells whether a match overlaps one: a text of many addresses costs no more per address.
 */
export function detectPii(text: string, categories: readonly PiiCategory[]): PiiSpan[] {
  let spans: PiiSpan[] = [];
  for (const detector of DETECTORS) {
    if (!categories.includes(detector.category)) continue;
    const found: PiiSpan[] = [];
    let next = 0; // the first earlier span that does not end before the match
    for (const [start, end] of detector.find(text)) {
      while (next < spans.length && spans[next]!.end <= start) next++;
      if (next < spans.length && spans[next]!.start < end) continue;
      found.push({ start, end, category: detector.category });
    }
    if (found.length > 0) spans = mergeSorted(spans, found);
  }
  return spans;
}

/** Two arrays of spans sorted by start, as one. */
function mergeSorted(a: PiiSpan[], b: PiiSpan[]): PiiSpan[] {
  if (a.length === 0) return b;
  const out: PiiSpan[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(a[i]!.start <= b[j]!.start ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

export const redactionFor = (category: PiiCategory) => `[REDACTED_${category}]`;

/** `text` with each span replaced by its category's placeholder. */
export function redactSpans(text: string, spans: readonly PiiSpan[]): string {
  let out = '';
  let at = 0;
  for (const span of spans) {
    out += text.slice(at, span.start) + redactionFor(span.category);
    at = span.end;
  }
  return out + text.slice(at);
}
