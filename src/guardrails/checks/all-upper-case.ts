import { z } from 'zod';
import { defineCheck, notFlag, verdictOf } from '../define-check.js';
import { currentText } from '../text/context-text.js';
import { GUARDRAIL_HOOKS } from '../types.js';

/** Passes when the text has no lower-case letter; digits and symbols do not matter. */
export const alluppercase = defineCheck({
  id: 'default.alluppercase',
  hooks: GUARDRAIL_HOOKS,
  parameters: z.strictObject({ not: notFlag }),
  run(context, p) {
    const upper = !/\p{Ll}/u.test(currentText(context));
    return verdictOf(upper, p.not, {
      whenTrue: 'Every letter of the text is upper case.',
      whenFalse: 'The text has lower-case letters.',
    });
  },
});
