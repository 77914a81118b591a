import { z } from 'zod';
import { defineCheck, notFlag, verdictOf } from '../define-check.js';
import { regexProblem, testAtOnce, testWithin } from '../safe-regex.js';
import { currentText } from '../text/context-text.js';
import { GUARDRAIL_HOOKS } from '../types.js';

/** Passes when the text matches `rule` (a JavaScript regular expression, no flags). */
export const regexMatch = defineCheck({
  id: 'default.regexMatch',
  hooks: GUARDRAIL_HOOKS,
  readOnly: true,
  parameters: z.strictObject({ rule: z.string().min(1).max(2000), not: notFlag }),
  refine: (p) => {
    const problem = regexProblem(p.rule);
    return problem ? { message: `rule is not a valid regular expression: ${problem}`, param: 'rule' } : null;
  },
  run(context, p) {
    const text = currentText(context);
    // A pattern whose work on this text is bounded and small runs at once; any other on the worker.
    const now = testAtOnce(p.rule, text);
    return now === undefined ? testWithin(p.rule, text).then((matched) => verdict(matched, p)) : verdict(now, p);
  },
});

const verdict = (matched: boolean, p: { rule: string; not: boolean }) =>
  verdictOf(
    matched,
    p.not,
    { whenTrue: 'The text matches the pattern.', whenFalse: 'The text does not match the pattern.' },
    { rule: p.rule },
  );
