import { z } from 'zod';
import { defineCheck, nonEmptyStrings, operator } from '../define-check.js';
import { currentText } from '../text/context-text.js';
import { GUARDRAIL_HOOKS } from '../types.js';

/**
 * Whether the text contains any, all or none of `words` (words or phrases, compared without
 * regard to case). The reference runs it on answers; svcgw also runs it on requests.
 */
export const contains = defineCheck({
  id: 'default.contains',
  hooks: GUARDRAIL_HOOKS,
  parameters: z.strictObject({ words: nonEmptyStrings, operator: operator('any') }),
  run(context, p) {
    const text = currentText(context).toLowerCase();
    const found = p.words.filter((word) => text.includes(word.toLowerCase()));
    const verdict =
      p.operator === 'any'
        ? found.length > 0
        : p.operator === 'all'
          ? found.length === p.words.length
          : found.length === 0;
    const missing = p.words.filter((word) => !found.includes(word));
    return {
      verdict,
      explanation: verdict
        ? `The text satisfies "${p.operator}" for the words given.`
        : p.operator === 'none'
          ? `The text contains ${found.map((w) => `"${w}"`).join(', ')}.`
          : `The text lacks ${missing.map((w) => `"${w}"`).join(', ')}.`,
      data: { operator: p.operator, found, missing },
    };
  },
});
