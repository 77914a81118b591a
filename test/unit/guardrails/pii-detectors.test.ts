import { describe, expect, it } from 'vitest';
import { detectPii, PII_CATEGORIES, type PiiSpan } from '../../../src/guardrails/pii/detectors.js';
import { urlsIn } from '../../../src/guardrails/checks/valid-urls.js';
import { randomTexts } from '../../helpers/random-texts.js';
import { chatContext, runOne } from './context.js';

/** The address pattern as it was searched for before the scanner: the scanner must find the same. */
const EMAIL_AS_SEARCHED = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b/g;

const spansOf = (text: string, spans: PiiSpan[]) =>
  spans.map((s) => `${s.category}:${text.slice(s.start, s.end)}@${s.start}`);

describe('PII detection', () => {
  it('finds the addresses the pattern finds, on texts made of the characters addresses are made of', () => {
    const texts = randomTexts(19, 4000, [...'ab1.-_+%@@..  x!cO'], 40);
    texts.push('a@b.co.x@c.org', 'x.y@a.bc@d.ef', 'a@b.c', '@a.bc', 'a@@b.co', 'a@b.cd.ef.', '..a@b.com..c@d.io');
    for (const text of texts) {
      const expected = [...text.matchAll(EMAIL_AS_SEARCHED)].map((m) => `EMAIL_ADDRESS:${m[0]}@${m.index}`);
      expect(spansOf(text, detectPii(text, ['EMAIL_ADDRESS'])), text).toEqual(expected);
    }
  });

  it('gives the earlier category the text where two overlap, and spans in text order', () => {
    const text = 'call 203.0.113.9 or mail ops@203.0.113.9.example.com, card 4111-1111-1111-1111, ssn 078-05-1120';
    expect(spansOf(text, detectPii(text, [...PII_CATEGORIES]))).toEqual([
      'IP_ADDRESS:203.0.113.9@5',
      'EMAIL_ADDRESS:ops@203.0.113.9.example.com@25',
      'CREDIT_CARD:4111-1111-1111-1111@59',
      'SSN:078-05-1120@84',
    ]);
  });

  // Inputs that took the old search seconds to hours (it was quadratic in them); each finishes
  // here within the test's own time-out on any machine, and finds what is there.
  it('reads megabytes of letters, digits or dots without an address at the speed of one pass', () => {
    for (const unit of ['a', '1', '.', 'a.', '1-', '+1']) {
      expect(detectPii(unit.repeat(2_000_000 / unit.length), [...PII_CATEGORIES])).toEqual([]);
    }
    const tail = `${'a'.repeat(1_000_000)}@example.com`;
    expect(spansOf(tail, detectPii(tail, ['EMAIL_ADDRESS']))).toEqual([`EMAIL_ADDRESS:${tail}@0`]);
  });

  it('finds a hundred thousand addresses in one text, each once', async () => {
    const text = '203.0.113.9 x@y.io '.repeat(100_000);
    const spans = detectPii(text, [...PII_CATEGORIES]);
    expect(spans).toHaveLength(200_000);
    const result = await runOne('default.pii', { redact: true }, chatContext(text));
    expect(result.data).toEqual({ found: { IP_ADDRESS: 100_000, EMAIL_ADDRESS: 100_000 }, redacted: true });
  });
});

describe('urlsIn', () => {
  it('leaves the sentence punctuation after a URL out, however much of it there is', () => {
    expect(urlsIn('See https://example.com/a?b=1.. and http://x.io/!')).toEqual([
      'https://example.com/a?b=1',
      'http://x.io/',
    ]);
    expect(urlsIn(`http://x${'.'.repeat(2_000_000)}y`)).toEqual([`http://x${'.'.repeat(2_000_000)}y`]);
    expect(urlsIn(`http://x${'.'.repeat(2_000_000)}`)).toEqual(['http://x']);
  });
});
