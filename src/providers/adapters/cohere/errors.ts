import type { TranslatedError } from '../types.js';
import { isObject } from './cohere-types.js';

/** The OpenAI error `type` a client library expects for each HTTP status family. */
export function openAIErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/**
 * The message of a Cohere error body. The documented shape is `{ message }` (with an `id` on
 * newer answers); `{ error: { message } }`, `{ error: "…" }` and `{ detail }` are read too, so
 * that a proxy or gateway in front of Cohere still yields its own words.
 */
export function cohereErrorMessage(body: unknown): string | null {
  if (!isObject(body)) return null;
  if (typeof body.message === 'string' && body.message !== '') return body.message;
  if (isObject(body.error) && typeof body.error.message === 'string' && body.error.message !== '') return body.error.message;
  if (typeof body.error === 'string' && body.error !== '') return body.error;
  if (typeof body.detail === 'string' && body.detail !== '') return body.detail;
  return null;
}

/** A Cohere 4xx/5xx as an OpenAI-shaped error; the provider's status is kept. */
export function translateCohereError(status: number, body: Buffer): TranslatedError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const message = cohereErrorMessage(parsed) ?? `The provider answered with HTTP ${status}.`;
  return { status, message, type: openAIErrorType(status) };
}
