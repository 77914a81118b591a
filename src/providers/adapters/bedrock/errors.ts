import type { IncomingHttpHeaders } from 'node:http';
import type { TranslatedError } from '../types.js';

/**
 * Error names Bedrock's documentation gives for each status, used when the `x-amzn-errortype`
 * header is not at hand (the body is only `{message}`). 403 has several causes (bad signature,
 * unknown key, missing permission), so it gets no name without the header.
 */
const NAME_BY_STATUS: Record<number, string> = {
  400: 'ValidationException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

const TYPE_BY_NAME: Record<string, string> = {
  ValidationException: 'invalid_request_error',
  ThrottlingException: 'rate_limit_error',
  ServiceQuotaExceededException: 'rate_limit_error',
  AccessDeniedException: 'permission_error',
  InvalidSignatureException: 'authentication_error',
  UnrecognizedClientException: 'authentication_error',
  ExpiredTokenException: 'authentication_error',
  MissingAuthenticationTokenException: 'authentication_error',
  ResourceNotFoundException: 'not_found_error',
};

/**
 * The bare error name from `x-amzn-errortype` (`ValidationException:http://internal…`), a body's
 * `__type` (`com.amazon.coral.service#UnrecognizedClientException`) or a stream's
 * `:exception-type` (`throttlingException`, the union member name).
 */
export function exceptionName(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw === '') return undefined;
  const name = raw.split(':', 1)[0]!.split('#').pop()!.trim();
  return name === '' ? undefined : name[0]!.toUpperCase() + name.slice(1);
}

/** The OpenAI error `type` for an AWS error name, else for the status family. */
export function errorTypeFor(name: string | undefined, status: number | null): string {
  if (name && TYPE_BY_NAME[name]) return TYPE_BY_NAME[name];
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status !== null && status >= 500) return 'api_error';
  return status === null ? 'api_error' : 'invalid_request_error';
}

/**
 * A Bedrock error answer (`{"message": …}`, name in `x-amzn-errortype`) in the OpenAI shape;
 * the status stays Bedrock's. A signature mismatch message carries the canonical request,
 * which holds a session token when one is used, so it is cut before that part.
 */
export function translateBedrockError(status: number, body: Buffer, headers?: IncomingHttpHeaders): TranslatedError {
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    if (typeof value === 'object' && value !== null) parsed = value as Record<string, unknown>;
  } catch {
    parsed = {};
  }
  const header = headers?.['x-amzn-errortype'];
  const name =
    exceptionName(Array.isArray(header) ? header[0] : header) ??
    exceptionName(parsed.__type) ??
    exceptionName(parsed.code) ??
    NAME_BY_STATUS[status];
  const raw =
    typeof parsed.message === 'string' ? parsed.message : typeof parsed.Message === 'string' ? parsed.Message : '';
  const message = scrub(raw) || `Bedrock answered with HTTP ${status}${name ? ` (${name})` : ''}.`;
  return { status, message, type: errorTypeFor(name, status), code: name };
}

/** Where a signature mismatch message starts quoting the canonical request. */
const CANONICAL_REQUEST = 'The Canonical String for this request';

/** The message without the canonical request, the whitespace before it and the ends trimmed. */
function scrub(message: string): string {
  const cut = message.indexOf(CANONICAL_REQUEST);
  return (cut === -1 ? message : message.slice(0, cut)).trim().slice(0, 2000);
}
