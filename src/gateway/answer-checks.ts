import { AppError } from '../lib/errors.js';
import type { TranslatedEndpoint, WireAdapter } from '../providers/adapters/types.js';
import { framedAsObject, PARSE_WHOLE_LIMIT } from './large-answer.js';
import type { UpstreamResponse } from './upstream-call.js';

/**
 * What a provider's answer must be before an attempt counts as answered. An answer that fails
 * here fails the attempt, as an unreachable provider does: a config's retries and fallback move
 * on, and the client gets 502 `UPSTREAM_ERROR` saying what was wrong with it.
 */

/** Endpoints whose successful answers are one JSON object, whichever provider answers. */
const JSON_OBJECT_ANSWERS: ReadonlySet<string> = new Set(['chatComplete', 'complete', 'embed', 'rerank']);

/** 3xx but 304 (an answer to the client's own conditional request on a pass-through route). */
export const isRedirect = (status: number): boolean => status >= 300 && status < 400 && status !== 304;

/**
 * A provider's redirect is not followed (the provider's credentials would go where it points) nor
 * passed on (the client's gateway key would): it names only the origin it pointed to, since the
 * rest of a URL may be signed.
 */
export function redirectRefused(status: number, location: string | string[] | undefined, from: string): AppError {
  let to = '';
  try {
    if (typeof location === 'string') to = ` to ${new URL(location, from).origin}`;
  } catch {
    // not a URL: named without it
  }
  return new AppError(
    'UPSTREAM_ERROR',
    `The provider answered ${status}, a redirect${to}, which the gateway does not follow: check the provider's address (x-service-custom-host or the target's custom_host).`,
  );
}

/**
 * The parsed body of a successful answer read whole on an endpoint that answers a JSON object;
 * undefined when the endpoint is not one of those (or the answer is a stream); an error when the
 * body is not such an object (a maintenance page, an empty body, an array).
 */
export function answerObject(
  endpoint: string,
  res: UpstreamResponse,
  provider: string,
  adapter: WireAdapter | undefined,
): Record<string, unknown> | AppError | undefined {
  if (res.bytes === null || res.statusCode >= 300 || !JSON_OBJECT_ANSWERS.has(endpoint)) return undefined;
  if (!adapter && res.bytes.length > PARSE_WHOLE_LIMIT)
    // Relayed as it came: only its framing is checked here (see large-answer.ts).
    return framedAsObject(res.bytes) ? undefined : unreadableAnswer(provider, res, 'it is not a JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.bytes.toString('utf8'));
  } catch {
    return unreadableAnswer(provider, res, res.bytes.length === 0 ? 'it is empty' : 'it is not JSON');
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const object = parsed as Record<string, unknown>;
    const problem = adapter?.answerProblem?.(endpoint as TranslatedEndpoint, object) ?? null;
    return problem === null ? object : unreadableAnswer(provider, res, problem);
  }
  const what = Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : `a ${typeof parsed}`;
  return unreadableAnswer(provider, res, `it is JSON, but ${what}`);
}

/** A successful answer the gateway could not read or translate; `why` never quotes the body. */
export function unreadableAnswer(provider: string, res: UpstreamResponse, why: string): AppError {
  return new AppError(
    'UPSTREAM_ERROR',
    `The provider (${provider}) answered ${res.statusCode} with a body the gateway could not read: ${why}.`,
  );
}
