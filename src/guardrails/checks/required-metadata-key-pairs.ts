import { z } from 'zod';
import { defineCheck, operator } from '../define-check.js';

/**
 * Whether the request's metadata holds all, any or none of `metadataPairs` (key and value
 * both equal; values compared as strings, case-sensitive).
 */
export const requiredMetadataKeyPairs = defineCheck({
  id: 'default.requiredMetadataKeyPairs',
  hooks: ['beforeRequestHook'],
  parameters: z.strictObject({
    metadataPairs: z
      .record(z.string().min(1), z.string())
      .refine((pairs) => Object.keys(pairs).length > 0, 'name at least one key and value'),
    operator: operator('all'),
  }),
  run(context, p) {
    const pairs = Object.entries(p.metadataPairs);
    const matched = pairs.filter(
      ([key, value]) => Object.hasOwn(context.metadata, key) && context.metadata[key] === value,
    );
    const unmatched = pairs.filter((pair) => !matched.includes(pair)).map(([key]) => key);
    const verdict =
      p.operator === 'all' ? unmatched.length === 0 : p.operator === 'any' ? matched.length > 0 : matched.length === 0;
    const matchedKeys = matched.map(([key]) => key);
    return {
      verdict,
      explanation: verdict
        ? `The metadata satisfies "${p.operator}" for the pairs given.`
        : p.operator === 'none'
          ? `The metadata has ${matchedKeys.join(', ')} with the values named.`
          : `The metadata lacks ${unmatched.join(', ')} with the values named.`,
      data: { operator: p.operator, matched: matchedKeys, unmatched },
    };
  },
});
