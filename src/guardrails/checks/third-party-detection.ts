import { z } from 'zod';
import { defineCheck } from '../define-check.js';
import { describeFetchError } from '../net/guarded-fetch.js';
import { postJson } from '../net/post-json.js';
import { rewrite, sideTexts } from '../text/context-text.js';
import { GUARDRAIL_HOOKS, type CheckResult } from '../types.js';
import { headerMap, httpUrl } from './webhook.js';

const isObj = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A detection service run by a third party (prompt-injection, toxicity, data-loss scanners),
 * reached over HTTP with a policy id. svcgw POSTs `{policy_id, hook, endpoint, texts, model,
 * provider, metadata}` to `url` with `Authorization: Bearer <apiKey>` (when given) and the
 * `headers`; the service answers `{verdict: boolean, explanation?, categories?: string[],
 * redacted_texts?: string[]}`. `redacted_texts`, one per text sent, replaces them.
 */
export const thirdPartyDetection = defineCheck({
  id: 'default.thirdPartyDetection',
  hooks: GUARDRAIL_HOOKS,
  parameters: z.strictObject({
    policyId: z.string().min(1).max(256),
    url: httpUrl,
    apiKey: z.string().min(1).max(4096).optional(),
    headers: headerMap.default({}),
    timeout: z.number().int().min(1).max(120_000).default(10_000),
    failOnError: z.boolean().default(false),
  }),
  timeoutMs: (p) => p.timeout,
  failOnError: (p) => p.failOnError,
  secretParameters: ['apiKey', 'headers'],
  async run(context, p) {
    const { slots } = sideTexts(context);
    const headers = { ...p.headers, ...(p.apiKey ? { authorization: `Bearer ${p.apiKey}` } : {}) };
    let answer: unknown;
    try {
      answer = await postJson(
        p.url,
        {
          policy_id: p.policyId,
          hook: context.hook,
          endpoint: context.endpoint,
          texts: slots.map((slot) => slot.text),
          model: context.model ?? null,
          provider: context.provider ?? null,
          metadata: context.metadata,
        },
        {
          headers,
          signal: context.signal,
          allowPrivate: context.server.allowPrivateCheckEndpoints,
          allowHosts: context.server.privateHostAllowlist,
        },
      );
    } catch (error) {
      throw new Error(`detection service: ${describeFetchError(error)}`, { cause: error });
    }
    if (!isObj(answer) || typeof answer.verdict !== 'boolean')
      throw new Error('detection service: the answer has no boolean verdict');
    const categories = Array.isArray(answer.categories) ? answer.categories.filter((c) => typeof c === 'string') : [];
    const result: CheckResult = {
      verdict: answer.verdict,
      explanation:
        typeof answer.explanation === 'string'
          ? answer.explanation.slice(0, 2000)
          : answer.verdict
            ? `Policy ${p.policyId} passed.`
            : `Policy ${p.policyId} failed${categories.length ? `: ${categories.join(', ')}` : ''}.`,
      data: { policyId: p.policyId, categories },
    };
    const redacted = answer.redacted_texts;
    if (Array.isArray(redacted) && redacted.length === slots.length && redacted.every((t) => typeof t === 'string')) {
      const changes = slots.flatMap((slot, i) =>
        redacted[i] === slot.text ? [] : [{ path: slot.path, text: redacted[i] as string }],
      );
      const transformed = rewrite(context, changes);
      if (transformed) result.transformed = transformed;
    }
    return result;
  },
});
