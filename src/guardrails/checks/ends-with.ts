import { z } from 'zod';
import { defineCheck, notFlag, verdictOf } from '../define-check.js';
import { currentText } from '../text/context-text.js';
import { GUARDRAIL_HOOKS } from '../types.js';

/** Passes when the text, trailing whitespace aside, ends with `suffix` (case-sensitive). */
export const endsWith = defineCheck({
  id: 'default.endsWith',
  hooks: GUARDRAIL_HOOKS,
  parameters: z.strictObject({ suffix: z.string().min(1), not: notFlag }),
  run(context, p) {
    const ends = currentText(context).trimEnd().endsWith(p.suffix);
    return verdictOf(ends, p.not, {
      whenTrue: `The text ends with "${p.suffix}".`,
      whenFalse: `The text does not end with "${p.suffix}".`,
    });
  },
});
