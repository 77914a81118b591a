import { z } from 'zod';
import { defineCheck, nonEmptyStrings, operator } from '../define-check.js';

/** Whether the request's metadata (x-service-metadata) has all, any or none of `metadataKeys`. */
export const requiredMetadataKeys = defineCheck({
  id: 'default.requiredMetadataKeys',
  hooks: ['beforeRequestHook'],
  parameters: z.strictObject({ metadataKeys: nonEmptyStrings, operator: operator('all') }),
  run(context, p) {
    const present = p.metadataKeys.filter((key) => Object.hasOwn(context.metadata, key));
    const missing = p.metadataKeys.filter((key) => !Object.hasOwn(context.metadata, key));
    const verdict =
      p.operator === 'all' ? missing.length === 0 : p.operator === 'any' ? present.length > 0 : present.length === 0;
    return {
      verdict,
      explanation: verdict
        ? `The metadata satisfies "${p.operator}" for the keys given.`
        : p.operator === 'none'
          ? `The metadata has ${present.join(', ')}.`
          : `The metadata lacks ${missing.join(', ')}.`,
      data: { operator: p.operator, present, missing },
    };
  },
});
