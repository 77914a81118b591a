import { z } from 'zod';
import { defineCheck } from '../define-check.js';
import { PII_CATEGORIES, detectPii, redactSpans, type PiiCategory } from '../pii/detectors.js';
import { rewrite, sideTexts } from '../text/context-text.js';
import { GUARDRAIL_HOOKS } from '../types.js';

/** Categories of the reference's PII checks that need a language model; svcgw says so instead of ignoring them. */
const MODEL_ONLY = new Set(['NAME', 'LOCATION_ADDRESS']);

const categories = z
  .array(z.string())
  .min(1)
  .superRefine((list, ctx) => {
    list.forEach((name, index) => {
      if ((PII_CATEGORIES as readonly string[]).includes(name)) return;
      ctx.addIssue({
        code: 'custom',
        path: [index],
        message: MODEL_ONLY.has(name)
          ? `${name} needs a language model; svcgw detects ${PII_CATEGORIES.join(', ')} (use a webhook or thirdPartyDetection check for names and addresses)`
          : `unknown category '${name}'; one of ${PII_CATEGORIES.join(', ')}`,
      });
    });
  })
  .transform((list) => list as PiiCategory[]);

/**
 * Finds e-mail addresses, phone numbers, card numbers (Luhn), IBANs (mod 97), US Social
 * Security numbers and IP addresses in every text of the request or the answer. Without
 * `redact` it fails when it finds any; with `redact` it replaces each with
 * `[REDACTED_<CATEGORY>]`, passes, and the provider (or the client) gets the redacted text.
 * A streamed answer has already gone out, so it can only be judged. `data` counts what was
 * found per category, never the values.
 */
export const pii = defineCheck({
  id: 'default.pii',
  hooks: GUARDRAIL_HOOKS,
  parameters: z.strictObject({
    categories: categories.default([...PII_CATEGORIES]),
    redact: z.boolean().default(false),
    /** The reference's vendor time limit; accepted and used as the check's. */
    timeout: z.number().int().min(1).max(60_000).default(5_000),
  }),
  timeoutMs: (p) => p.timeout,
  run(context, p) {
    const { side, slots, writable } = sideTexts(context);
    const found: Partial<Record<PiiCategory, number>> = {};
    const changes: { path: readonly (string | number)[]; text: string }[] = [];
    for (const slot of slots) {
      const spans = detectPii(slot.text, p.categories);
      if (spans.length === 0) continue;
      for (const span of spans) found[span.category] = (found[span.category] ?? 0) + 1;
      if (p.redact && writable) changes.push({ path: slot.path, text: redactSpans(slot.text, spans) });
    }
    const kinds = Object.keys(found);
    if (kinds.length === 0)
      return { verdict: true, explanation: `No PII found in the ${side}.`, data: { found, redacted: false } };
    const transformed = p.redact ? rewrite(context, changes) : undefined;
    if (transformed)
      return {
        verdict: true,
        explanation: `Redacted ${kinds.join(', ')} in the ${side}.`,
        data: { found, redacted: true },
        transformed,
      };
    return {
      verdict: false,
      explanation: `Found ${kinds.join(', ')} in the ${side}${p.redact ? ' (a streamed answer cannot be redacted)' : ''}.`,
      data: { found, redacted: false },
    };
  },
});
