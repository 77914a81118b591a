import { guardedFetch } from './guarded-fetch.js';

/** The largest answer a webhook or vendor may send back. */
const MAX_ANSWER_BYTES = 10 * 1024 * 1024;

/**
 * POSTs JSON to a check endpoint and parses the JSON answer. Redirects are not followed (a
 * POST that bounces elsewhere is a misconfiguration) and a non-2xx status is an error; the
 * error never carries the request's headers (they hold credentials).
 */
export async function postJson(
  url: string,
  body: unknown,
  init: {
    headers: Record<string, string>;
    signal: AbortSignal;
    allowPrivate: boolean;
    allowHosts?: readonly string[] | undefined;
  },
): Promise<unknown> {
  const answer = await guardedFetch(url, {
    method: 'POST',
    headers: { ...init.headers, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
    signal: init.signal,
    allowPrivate: init.allowPrivate,
    allowHosts: init.allowHosts,
    maxRedirects: 0,
    maxBytes: MAX_ANSWER_BYTES,
  });
  if (answer.status < 200 || answer.status > 299) throw new Error(`the endpoint answered HTTP ${answer.status}`);
  try {
    return JSON.parse(answer.body.toString('utf8')) as unknown;
  } catch {
    throw new Error('the endpoint answered with something other than JSON');
  }
}
