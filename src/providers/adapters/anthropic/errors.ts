import { openAIErrorType, parseErrorBody } from '../shared/openai-shapes.js';
import type { TranslatedError } from '../types.js';
import { isObject, type AnthropicErrorBody } from './wire-types.js';

/**
 * Anthropic error types as the OpenAI `type` a client library expects. The Anthropic type
 * itself is kept as the `code`, so `overloaded_error` stays visible to the client.
 */
const OPENAI_TYPES: Record<string, string> = {
  invalid_request_error: 'invalid_request_error',
  request_too_large: 'invalid_request_error',
  authentication_error: 'authentication_error',
  permission_error: 'permission_error',
  not_found_error: 'not_found_error',
  billing_error: 'insufficient_quota',
  rate_limit_error: 'rate_limit_error',
  api_error: 'api_error',
  overloaded_error: 'api_error',
  timeout_error: 'api_error',
};

/** The `error` object of an Anthropic error body or stream event, or null when it is not one. */
export function anthropicErrorOf(value: unknown): { type?: string; message?: string } | null {
  const body = value as AnthropicErrorBody | null;
  return isObject(body) && isObject(body.error) ? body.error : null;
}

/** Maps `{ type: 'error', error: { type, message } }` to the OpenAI shape; the status is kept. */
export function translateAnthropicError(status: number, body: Buffer): TranslatedError {
  const parsed = parseErrorBody(body);
  const error = anthropicErrorOf(parsed);
  const anthropicType = typeof error?.type === 'string' ? error.type : undefined;
  const text = parsed === undefined ? body.toString('utf8').trim().slice(0, 200) : '';
  const message =
    typeof error?.message === 'string' && error.message !== ''
      ? error.message
      : `The provider answered with HTTP ${status}${text ? `: ${text}` : '.'}`;
  return {
    status,
    message,
    type: (anthropicType && OPENAI_TYPES[anthropicType]) ?? openAIErrorType(status),
    code: anthropicType,
  };
}

/** The same mapping for the data of an `error` event inside a 200 stream. */
export function streamError(data: unknown): { message: string; type: string; code: string | undefined } {
  const error = anthropicErrorOf(data);
  const code = typeof error?.type === 'string' ? error.type : undefined;
  const message =
    typeof error?.message === 'string' && error.message !== ''
      ? error.message
      : 'The provider reported an error in its stream.';
  return { message, type: (code && OPENAI_TYPES[code]) ?? 'api_error', code };
}
