import { openAIErrorType, parseErrorBody } from '../shared/openai-shapes.js';
import type { TranslatedError } from '../types.js';

export { openAIErrorType };
import { isObject } from './cohere-types.js';

/**
 * The message of a Cohere error body. The documented shape is `{ message }` (with an `id` on
 * newer answers); `{ error: { message } }`, `{ error: "…" }` and `{ detail }` are read too, so
 * that a proxy or gateway in front of Cohere still yields its own words.
 */
export function cohereErrorMessage(body: unknown): string | null {
  if (!isObject(body)) return null;
  if (typeof body.message === 'string' && body.message !== '') return body.message;
  if (isObject(body.error) && typeof body.error.message === 'string' && body.error.message !== '')
    return body.error.message;
  if (typeof body.error === 'string' && body.error !== '') return body.error;
  if (typeof body.detail === 'string' && body.detail !== '') return body.detail;
  return null;
}

/** A Cohere 4xx/5xx as an OpenAI-shaped error; the provider's status is kept. */
export function translateCohereError(status: number, body: Buffer): TranslatedError {
  const message = cohereErrorMessage(parseErrorBody(body)) ?? `The provider answered with HTTP ${status}.`;
  return { status, message, type: openAIErrorType(status) };
}
