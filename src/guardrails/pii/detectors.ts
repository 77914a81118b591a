/**
 * Pattern-and-checksum PII detection: no model, no network, linear-time patterns. What each
 * category recognises (and misses) is listed in docs/guardrails.md.
 */
import { isIPv6 } from 'node:net';

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
  pattern: RegExp;
  accept?: (match: string) => boolean;
}

const digitsOf = (s: string) => s.replace(/\D/g, '');

/** In priority order: where two overlap, the earlier detector keeps the text. */
const DETECTORS: readonly Detector[] = [
  { category: 'EMAIL_ADDRESS', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b/g },
  {
    category: 'IBAN',
    pattern: /\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}\b/g,
    accept: ibanValid,
  },
  {
    category: 'CREDIT_CARD',
    pattern: /\b\d(?:[ -]?\d){12,18}\b/g,
    accept: (m) => {
      const digits = digitsOf(m);
      return digits.length >= 13 && digits.length <= 19 && luhnValid(digits);
    },
  },
  // US Social Security numbers, written NNN-NN-NNNN, without the numbers never issued.
  { category: 'SSN', pattern: /\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/g },
  {
    category: 'IP_ADDRESS',
    pattern: /\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b/g,
  },
  {
    category: 'IP_ADDRESS',
    pattern: /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g,
    accept: (m) => isIPv6(m) && /[0-9A-Fa-f]/.test(m),
  },
  {
    // International (+…), an area code in parentheses, or North American 3-3-4.
    category: 'PHONE_NUMBER',
    pattern:
      /(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}|\(\d{2,4}\)[ .-]?\d{2,4}(?:[ .-]?\d{2,4}){1,3}|\d{3}[.-]\d{3}[.-]\d{4})(?!\w)/g,
    accept: (m) => {
      const n = digitsOf(m).length;
      return n >= 8 && n <= 15;
    },
  },
];

/** The PII spans of `text` in the categories asked for, in text order, never overlapping. */
export function detectPii(text: string, categories: readonly PiiCategory[]): PiiSpan[] {
  const spans: PiiSpan[] = [];
  const overlaps = (start: number, end: number) => spans.some((s) => start < s.end && s.start < end);
  for (const detector of DETECTORS) {
    if (!categories.includes(detector.category)) continue;
    for (const match of text.matchAll(detector.pattern)) {
      const start = match.index;
      const end = start + match[0].length;
      if (detector.accept && !detector.accept(match[0])) continue;
      if (!overlaps(start, end)) spans.push({ start, end, category: detector.category });
    }
  }
  return spans.sort((a, b) => a.start - b.start);
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
