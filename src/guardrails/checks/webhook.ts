import { z } from 'zod';
import { defineCheck } from '../define-check.js';
import { describeFetchError } from '../net/guarded-fetch.js';
import { postJson } from '../net/post-json.js';
import { GUARDRAIL_HOOKS, type CheckResult } from '../types.js';

export const httpUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
    } catch {
      return false;
    }
  }, 'must be an http or https URL without credentials');

export const headerMap = z.record(
  z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'not a header name'),
  z.string().max(8192),
);

const isObj = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * POSTs the request (and, after the provider, the answer) to `webhookURL` and takes its
 * verdict. The webhook gets `{eventType, endpoint, request: {json}, response: {json, text,
 * status}, metadata, provider, model}` (never the client's headers) and answers
 * `{verdict: boolean, explanation?, data?, transformedData?: {request?: {json}, response?: {json}}}`;
 * a `transformedData` body replaces the request (or the answer) for what follows.
 */
export const webhook = defineCheck({
  id: 'default.webhook',
  hooks: GUARDRAIL_HOOKS,
  parameters: z.strictObject({
    webhookURL: httpUrl,
    headers: headerMap.default({}),
    timeout: z.number().int().min(1).max(120_000).default(3_000),
    failOnError: z.boolean().default(false),
  }),
  timeoutMs: (p) => p.timeout,
  failOnError: (p) => p.failOnError,
  secretParameters: ['headers'],
  async run(context, p) {
    const payload = {
      eventType: context.hook,
      endpoint: context.endpoint,
      request: { json: context.request.json },
      response: context.response
        ? {
            json: context.response.json ?? null,
            text: context.response.streamText ?? null,
            status: context.response.status ?? null,
          }
        : null,
      metadata: context.metadata,
      provider: context.provider ?? null,
      model: context.model ?? null,
    };
    let answer: unknown;
    try {
      answer = await postJson(p.webhookURL, payload, {
        headers: p.headers,
        signal: context.signal,
        allowPrivate: context.server.allowPrivateCheckEndpoints,
        allowHosts: context.server.privateHostAllowlist,
      });
    } catch (error) {
      throw new Error(`webhook: ${describeFetchError(error)}`, { cause: error });
    }
    if (!isObj(answer) || typeof answer.verdict !== 'boolean')
      throw new Error('webhook: the answer has no boolean verdict');
    const result: CheckResult = {
      verdict: answer.verdict,
      explanation:
        typeof answer.explanation === 'string'
          ? answer.explanation.slice(0, 2000)
          : answer.verdict
            ? 'The webhook passed the request.'
            : 'The webhook failed the request.',
    };
    if (isObj(answer.data)) result.data = answer.data;
    const changed = isObj(answer.transformedData) ? answer.transformedData : undefined;
    const request = isObj(changed?.request) && isObj(changed.request.json) ? changed.request.json : undefined;
    const response = isObj(changed?.response) && isObj(changed.response.json) ? changed.response.json : undefined;
    if (context.hook === 'beforeRequestHook' && request) result.transformed = { request };
    if (context.hook === 'afterRequestHook' && response && context.response?.json !== undefined)
      result.transformed = { response };
    return result;
  },
});
