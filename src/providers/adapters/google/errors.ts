import type { TranslatedError } from '../types.js';

/** Google's error body: `{ error: { code, message, status, details } }` (Vertex may wrap it in an array). */
export interface GoogleError {
  code?: number;
  message?: string;
  status?: string;
}

/** The OpenAI error `type` a client library expects for each HTTP status family. */
export function openAIErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** The `error` object of a Google error body, or null when the value is not one. */
export function googleErrorOf(value: unknown): GoogleError | null {
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first !== 'object' || first === null) return null;
  const error = (first as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return null;
  return error as GoogleError;
}

/**
 * Maps a Google error response to the OpenAI shape. The status stays the provider's; the
 * canonical status name (`INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`, …) becomes the `code`.
 */
export function translateGoogleError(status: number, body: Buffer): TranslatedError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const error = googleErrorOf(parsed);
  const message = typeof error?.message === 'string' && error.message !== '' ? error.message : `The provider answered with HTTP ${status}.`;
  return { status, message, type: openAIErrorType(status), code: typeof error?.status === 'string' ? error.status : undefined };
}
