import { z } from 'zod';
import { defineCheck } from '../define-check.js';
import { describeFetchError, guardedFetch } from '../net/guarded-fetch.js';
import { setAt } from '../text/write.js';
import type { GuardrailContext, GuardrailEndpoint } from '../types.js';

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
const isHttp = (value: unknown): value is string => typeof value === 'string' && /^https?:\/\//i.test(value);

/** An image given by URL, and how to write it back inline. */
interface ImageRef {
  url: string;
  replace(body: unknown, mime: string, base64: string): void;
}

/** Image parts with http(s) URLs in chat (image_url), Responses (input_image) and Anthropic (image source url). */
function imageRefs(endpoint: GuardrailEndpoint, body: unknown): ImageRef[] {
  if (!isObj(body)) return [];
  const list = endpoint === 'createModelResponse' ? body.input : body.messages;
  if (!Array.isArray(list)) return [];
  const key = endpoint === 'createModelResponse' ? 'input' : 'messages';
  const refs: ImageRef[] = [];
  list.forEach((message, i) => {
    if (!isObj(message) || !Array.isArray(message.content)) return;
    message.content.forEach((part, j) => {
      if (!isObj(part)) return;
      const at = [key, i, 'content', j];
      if (endpoint === 'chatComplete' && part.type === 'image_url') {
        const url = isObj(part.image_url) ? part.image_url.url : part.image_url;
        if (isHttp(url))
          refs.push({
            url,
            replace: (b, mime, data) => setAt(b, [...at, 'image_url', 'url'], `data:${mime};base64,${data}`),
          });
      } else if (endpoint === 'createModelResponse' && part.type === 'input_image' && isHttp(part.image_url)) {
        refs.push({
          url: part.image_url,
          replace: (b, mime, data) => setAt(b, [...at, 'image_url'], `data:${mime};base64,${data}`),
        });
      } else if (
        endpoint === 'messages' &&
        part.type === 'image' &&
        isObj(part.source) &&
        part.source.type === 'url' &&
        isHttp(part.source.url)
      ) {
        refs.push({
          url: part.source.url,
          replace: (b, mime, data) => setAt(b, [...at, 'source'], { type: 'base64', media_type: mime, data }),
        });
      }
    });
  });
  return refs;
}

async function fetchImage(url: string, context: GuardrailContext, maxSizeBytes: number, timeoutMs: number) {
  const answer = await guardedFetch(url, {
    allowPrivate: context.server.allowPrivateContentUrls,
    allowHosts: context.server.privateHostAllowlist,
    headers: { accept: 'image/*' },
    signal: AbortSignal.any([context.signal, AbortSignal.timeout(timeoutMs)]),
    maxRedirects: 3,
    maxBytes: maxSizeBytes,
  });
  if (answer.status !== 200) throw new Error(`HTTP ${answer.status}`);
  const mime = (answer.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!mime.startsWith('image/')) throw new Error(`not an image (${mime || 'no content-type'})`);
  return { mime, base64: answer.body.toString('base64') };
}

/**
 * Fetches the images a request names by http(s) URL and puts them in the request as base64,
 * for providers that cannot fetch URLs themselves (`providers`; every provider when absent).
 * Private, loopback, link-local and unique-local addresses are refused (redirects included)
 * unless the server allows private content URLs. An image that cannot be fetched stays a URL;
 * with `failOnError` that fails the check.
 */
export const inlineImageUrls = defineCheck({
  id: 'default.inlineImageUrls',
  hooks: ['beforeRequestHook'],
  parameters: z.strictObject({
    providers: z.array(z.string().min(1)).optional(),
    maxSizeBytes: z
      .number()
      .int()
      .min(1)
      .max(100 * 1024 * 1024)
      .default(20 * 1024 * 1024),
    timeoutMs: z.number().int().min(1).max(120_000).default(30_000),
    failOnError: z.boolean().default(false),
  }),
  // Each fetch has timeoutMs; the check gets a little more to report which failed.
  timeoutMs: (p) => p.timeoutMs + 1_000,
  failOnError: (p) => p.failOnError,
  async run(context, p) {
    if (p.providers && !(context.provider !== undefined && p.providers.includes(context.provider)))
      return {
        verdict: true,
        explanation: `Not applied to provider "${context.provider ?? ''}".`,
        data: { inlined: 0 },
      };
    const refs = imageRefs(context.endpoint, context.request.json);
    if (refs.length === 0) return { verdict: true, explanation: 'No image URLs to inline.', data: { inlined: 0 } };
    const urls = [...new Set(refs.map((ref) => ref.url))];
    const fetched = await Promise.allSettled(urls.map((url) => fetchImage(url, context, p.maxSizeBytes, p.timeoutMs)));
    const images = new Map<string, { mime: string; base64: string }>();
    const failed: { url: string; reason: string }[] = [];
    fetched.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') images.set(urls[i]!, outcome.value);
      else failed.push({ url: urls[i]!.slice(0, 200), reason: describeFetchError(outcome.reason) });
    });
    const body = structuredClone(context.request.json);
    let inlined = 0;
    for (const ref of refs) {
      const image = images.get(ref.url);
      if (!image) continue;
      ref.replace(body, image.mime, image.base64);
      inlined++;
    }
    const data = { inlined, failed };
    const explanation = failed.length
      ? `Inlined ${inlined} image(s); ${failed.length} could not be fetched.`
      : `Inlined ${inlined} image(s).`;
    return {
      verdict: true,
      explanation,
      data,
      ...(failed.length ? { error: failed.map((f) => `${f.url}: ${f.reason}`).join('; ') } : {}),
      ...(inlined > 0 ? { transformed: { request: body } } : {}),
    };
  },
});
