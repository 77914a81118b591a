import { z } from 'zod';
import { defineCheck, notFlag, verdictOf } from '../define-check.js';
import { currentText } from '../text/context-text.js';
import { GUARDRAIL_HOOKS } from '../types.js';

/** Passes when the text has no upper-case (or title-case) letter; digits and symbols do not matter. */
export const isAllLowerCase = defineCheck({
  id: 'default.isAllLowerCase',
  hooks: GUARDRAIL_HOOKS,
  parameters: z.strictObject({ not: notFlag }),
  run(context, p) {
    const lower = !/[\p{Lu}\p{Lt}]/u.test(currentText(context));
    return verdictOf(lower, p.not, {
      whenTrue: 'Every letter of the text is lower case.',
      whenFalse: 'The text has upper-case letters.',
    });
  },
});
