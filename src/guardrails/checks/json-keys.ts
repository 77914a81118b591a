import { z } from 'zod';
import { defineCheck, nonEmptyStrings, operator } from '../define-check.js';
import { currentText } from '../text/context-text.js';
import { jsonInText } from '../text/json-in-text.js';

/** Whether the answer's JSON object has any, all or none of `keys` at its top level. */
export const jsonKeys = defineCheck({
  id: 'default.jsonKeys',
  hooks: ['afterRequestHook'],
  parameters: z.strictObject({ keys: nonEmptyStrings, operator: operator('any') }),
  run(context, p) {
    const json = jsonInText(currentText(context));
    const object =
      json.found && typeof json.value === 'object' && json.value !== null && !Array.isArray(json.value)
        ? (json.value as Record<string, unknown>)
        : null;
    if (!object)
      return { verdict: false, explanation: 'The text holds no JSON object.', data: { found: [], missing: p.keys } };
    const found = p.keys.filter((key) => Object.hasOwn(object, key));
    const missing = p.keys.filter((key) => !Object.hasOwn(object, key));
    const verdict =
      p.operator === 'any' ? found.length > 0 : p.operator === 'all' ? missing.length === 0 : found.length === 0;
    return {
      verdict,
      explanation: verdict
        ? `The JSON satisfies "${p.operator}" for the keys given.`
        : p.operator === 'none'
          ? `The JSON has ${found.join(', ')}.`
          : `The JSON lacks ${missing.join(', ')}.`,
      data: { operator: p.operator, found, missing },
    };
  },
});
