import { lookup } from 'node:dns/promises';
import { z } from 'zod';
import { defineCheck, notFlag, verdictOf } from '../define-check.js';
import { guardedFetch } from '../net/guarded-fetch.js';
import { currentText } from '../text/context-text.js';
import { GUARDRAIL_HOOKS, type GuardrailContext } from '../types.js';

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`)\]}]+/gi;
const MAX_URLS = 10;
const PER_URL_TIMEOUT_MS = 3_000;

/** Sentence punctuation after a URL is not part of it. */
const TRAILING_PUNCTUATION = new Set(['.', ',', ';', ':', '!', '?']);

/**
 * The URL without the punctuation that ends it. A loop, not `/[.,;:!?]+$/`: that pattern tries
 * every start in a run of dots and reads to the run's end from each, quadratic in the run.
 */
function withoutTrailingPunctuation(url: string): string {
  let end = url.length;
  while (end > 0 && TRAILING_PUNCTUATION.has(url[end - 1]!)) end--;
  return url.slice(0, end);
}

export const urlsIn = (text: string) =>
  [...new Set([...text.matchAll(URL_IN_TEXT)].map((m) => withoutTrailingPunctuation(m[0])))].slice(0, MAX_URLS);

async function reachable(raw: string, onlyDNS: boolean, context: GuardrailContext): Promise<boolean> {
  try {
    const url = new URL(raw);
    if (onlyDNS) {
      await lookup(url.hostname.replace(/^\[|\]$/g, ''));
      return true;
    }
    const answer = await guardedFetch(url, {
      method: 'HEAD',
      allowPrivate: context.server.allowPrivateContentUrls,
      allowHosts: context.server.privateHostAllowlist,
      signal: AbortSignal.any([context.signal, AbortSignal.timeout(PER_URL_TIMEOUT_MS)]),
      maxRedirects: 3,
      maxBytes: 0,
    });
    // 405/501: the server does not do HEAD, but it answered for the URL.
    return answer.status < 400 || answer.status === 405 || answer.status === 501;
  } catch {
    return false;
  }
}

/**
 * Passes when every http(s) URL in the text (the first ten) works: its host resolves
 * (`onlyDNS`) or it answers a HEAD request with a status below 400 within 3 seconds. Private
 * addresses count as not working unless the server allows private content URLs. A text
 * without URLs passes.
 */
export const validUrls = defineCheck({
  id: 'default.validUrls',
  hooks: GUARDRAIL_HOOKS,
  parameters: z.strictObject({ onlyDNS: z.boolean().default(false), not: notFlag }),
  timeoutMs: () => PER_URL_TIMEOUT_MS * 3,
  async run(context, p) {
    const urls = urlsIn(currentText(context));
    const results = await Promise.all(urls.map((url) => reachable(url, p.onlyDNS, context)));
    const invalid = urls.filter((_, i) => !results[i]);
    return verdictOf(
      invalid.length === 0,
      p.not,
      {
        whenTrue: urls.length ? `All ${urls.length} URL(s) work.` : 'The text has no URLs.',
        whenFalse: `${invalid.length} of ${urls.length} URL(s) do not work.`,
      },
      { urls: urls.length, invalid },
    );
  },
});
