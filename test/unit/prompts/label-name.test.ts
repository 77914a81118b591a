import { describe, expect, it } from 'vitest';
import { createLabelBody, LABEL_NAME } from '../../../src/admin/prompts/catalog-schemas.js';
import { randomTexts } from '../../helpers/random-texts.js';

/** The rule as it was written before it was made unambiguous: the new pattern must accept the same names. */
const AS_WRITTEN = /^(?!latest$)(?!default$)(?!\d+$)[a-zA-Z0-9_-]*[^@\s]?[a-zA-Z0-9_-]*$/;

describe('label names', () => {
  it('accepts the names the rule as written accepted, and no others', () => {
    const pieces = ['a', 'Z', '0', '_', '-', '.', '!', 'é', '@', ' ', '\t', 'latest', 'default', '12'];
    for (const name of randomTexts(7, 20_000, pieces, 5)) {
      expect(LABEL_NAME.test(name), JSON.stringify(name)).toBe(AS_WRITTEN.test(name));
    }
    expect(['prod', 'v1.2', 'my-label_2', 'x!y'].every((name) => LABEL_NAME.test(name))).toBe(true);
    expect(['latest', 'default', '42', 'a b', 'a@b', 'a.b.c'].some((name) => LABEL_NAME.test(name))).toBe(false);
  });

  // A name of 80,000 characters took 11 s of the event loop to refuse.
  it('refuses a name of megabytes for its length, in one pass', () => {
    const result = createLabelBody.safeParse({
      name: `${'a'.repeat(2_000_000)}@`,
      organisation_id: crypto.randomUUID(),
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toContain('name');
  });
});
