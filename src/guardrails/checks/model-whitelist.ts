import { z } from 'zod';
import { defineCheck, nonEmptyStrings, notFlag, verdictOf } from '../define-check.js';

/**
 * Passes when the request's model is one of `models` (exact names); with `not`, when it is
 * none of them (a blocklist).
 */
export const modelWhitelist = defineCheck({
  id: 'default.modelWhitelist',
  hooks: ['beforeRequestHook'],
  parameters: z.strictObject({ models: nonEmptyStrings, not: notFlag }),
  run(context, p) {
    const body = context.request.json;
    const model =
      context.model ??
      (typeof body === 'object' && body !== null && typeof (body as { model?: unknown }).model === 'string'
        ? (body as { model: string }).model
        : '');
    return verdictOf(
      p.models.includes(model),
      p.not,
      { whenTrue: `Model "${model}" is in the list.`, whenFalse: `Model "${model}" is not in the list.` },
      { model },
    );
  },
});
