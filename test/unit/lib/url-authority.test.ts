import { describe, expect, it } from 'vitest';
import { withoutUrlCredentials } from '../../../src/lib/mask.js';
import { REDACTED, redactUrlPassword } from '../../../src/lib/redact.js';
import { randomTexts } from '../../helpers/random-texts.js';

/** The patterns as they were searched for before the one-pass scan: the scan must give the same text. */
const PASSWORD_AS_SEARCHED = /\b([a-z][a-z0-9+.-]*:\/\/[^/?#@\s:]*):[^/?#@\s]*@/gi;
const USERINFO_AS_SEARCHED = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s?#]*@/gi;

describe('URL credentials in free text', () => {
  it('are found as the global patterns found them, on texts made of URL pieces', () => {
    const pieces = ['://', 'a', 'B', '1', '_', '.', '+', '-', ':', '@', '/', '?', '#', ' ', 'http', 'x:y@', 'u:p@h'];
    const texts = randomTexts(25, 6000, pieces, 16);
    texts.push('http://a:b@c http://d:e@f', 'x_http://u:p@h', '1http://u:p@h', '.http://u:p@h', 'http://u:p@h://v:q@i');
    for (const text of texts) {
      expect(redactUrlPassword(text), text).toBe(text.replace(PASSWORD_AS_SEARCHED, `$1:${REDACTED}@`));
      expect(withoutUrlCredentials(text), text).toBe(text.replace(USERINFO_AS_SEARCHED, '$1***@'));
    }
  });

  // The global patterns took 22 s on 320,000 characters of this, and a log line carries a
  // model name of any length: each finishes here within the test's own time-out, in one pass.
  it('are looked for in one pass over megabytes of scheme characters', () => {
    const long = `${'a.'.repeat(1_000_000)}@`;
    expect(redactUrlPassword(long)).toBe(long);
    expect(withoutUrlCredentials(long)).toBe(long);
    const withUrls = `${'a.'.repeat(1_000_000)}://u:p@h ${'b+'.repeat(500_000)}`;
    expect(redactUrlPassword(withUrls)).toBe(`${'a.'.repeat(1_000_000)}://u:${REDACTED}@h ${'b+'.repeat(500_000)}`);
    expect(withoutUrlCredentials(withUrls)).toBe(`${'a.'.repeat(1_000_000)}://***@h ${'b+'.repeat(500_000)}`);
  });
});
