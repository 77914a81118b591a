import { invalid } from '../../../lib/errors.js';

/** The OpenAI error `type` a client library expects for each HTTP status family. */
export function openAIErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** A provider's error body parsed, or undefined when it is not JSON (an HTML page from a proxy, say). */
export function parseErrorBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A tool call's `arguments`: a JSON string in OpenAI's format, whose object the other wire
 * formats carry as it is. Empty means no arguments; anything but a JSON object is refused,
 * naming `at`.
 */
export function toolArgumentsObject(raw: unknown, at: string): Record<string, unknown> {
  if (raw === undefined || raw === null || raw === '') return {};
  if (typeof raw !== 'string') throw invalid(at, `${at} must be a JSON string.`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalid(at, `${at} is not valid JSON.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw invalid(at, `${at} must encode a JSON object.`);
  return parsed as Record<string, unknown>;
}
