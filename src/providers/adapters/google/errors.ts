import { openAIErrorType, parseErrorBody } from '../shared/openai-shapes.js';
import type { TranslatedError } from '../types.js';

export { openAIErrorType };

/** Google's error body: `{ error: { code, message, status, details } }` (Vertex may wrap it in an array). */
export interface GoogleError {
  code?: number;
  message?: string;
  status?: string;
}

/** The `error` object of a Google error body, or null when the value is not one. */
export function googleErrorOf(value: unknown): GoogleError | null {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  if (typeof first !== 'object' || first === null) return null;
  const error = (first as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return null;
  return error;
}

/**
 * Maps a Google error response to the OpenAI shape. The status stays the provider's; the
 * canonical status name (`INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`, …) becomes the `code`.
 */
export function translateGoogleError(status: number, body: Buffer): TranslatedError {
  const error = googleErrorOf(parseErrorBody(body));
  const message =
    typeof error?.message === 'string' && error.message !== ''
      ? error.message
      : `The provider answered with HTTP ${status}.`;
  return {
    status,
    message,
    type: openAIErrorType(status),
    code: typeof error?.status === 'string' ? error.status : undefined,
  };
}
