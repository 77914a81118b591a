import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, codeToStatus, errorBody, type ErrorCode } from '../../lib/errors.js';
import { conflictingField, uniqueViolation } from '../../storage/unique-violation.js';

/**
 * One error handler for both planes: every failure becomes the OpenAI-shaped error body with
 * a stable code; unexpected failures are logged in full and answered with a generic message.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError | Error, request, reply) => {
    if (error instanceof AppError) return send(reply, error.code, error.message, error.param);

    if (hasZodFastifySchemaValidationErrors(error)) {
      const context = (error as FastifyError).validationContext ?? 'body';
      const issues = error.validation as ReadonlyArray<{ instancePath: string; message?: string }>;
      const [first] = issues;
      const param = first ? paramName(context, first.instancePath) : context;
      const details = issues
        .map((issue) => `${paramName(context, issue.instancePath)}: ${issue.message ?? 'invalid'}`)
        .join('; ');
      return send(reply, 'INVALID_REQUEST', `Invalid ${context}: ${details}`, param);
    }

    const fastifyError = error as FastifyError;
    const mapped = mapFastifyError(fastifyError);
    if (mapped) return send(reply, mapped.code, mapped.message);

    // A create or rename that lost a race to another request (on any instance) for a unique name.
    const violation = uniqueViolation(error);
    if (violation) {
      const field = conflictingField(violation);
      request.log.info({ field }, 'unique constraint refused a write');
      return send(
        reply,
        'CONFLICT',
        field ? `Another resource already uses this ${field}.` : 'The resource already exists.',
        field,
      );
    }

    request.log.error({ err: error }, 'unhandled error');
    return send(reply, 'INTERNAL_ERROR', `Internal server error (request id ${request.id}).`);
  });

  app.setNotFoundHandler((request, reply) =>
    send(reply, 'ROUTE_NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}.`),
  );
}

/** The error each refused request was answered with, for the record of a refusal. */
const sentErrors = new WeakMap<FastifyRequest, { code: ErrorCode; message: string }>();

export function sentError(request: FastifyRequest): { code: ErrorCode; message: string } | null {
  return sentErrors.get(request) ?? null;
}

export function send(reply: FastifyReply, code: ErrorCode, message: string, param: string | null = null) {
  const body = errorBody(code, message, param);
  sentErrors.set(reply.request, { code, message });
  // The rest of an oversized body is not worth reading just to keep the connection open.
  if (code === 'PAYLOAD_TOO_LARGE') reply.header('connection', 'close');
  return reply.code(new AppError(code, message).status).type('application/json; charset=utf-8').send(body);
}

/**
 * fastify's `frameworkErrors`: failures it meets before routing (a path it cannot decode, a
 * parameter over maxParamLength) get the one error body and a request id like any other
 * answer. No hook runs for these, so the refusal is logged here. A backstop: path
 * normalisation already turns undecodable paths into a routable spelling that the request
 * gate refuses (and logs as a gateway record when a key made it).
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const mapped = mapFastifyError(error) ?? { code: 'INVALID_REQUEST' as const, message: error.message };
  reply.header('x-request-id', request.id);
  request.log.info(
    {
      request_id: request.id,
      method: request.method,
      status: codeToStatus(mapped.code),
      code: mapped.code,
      fastify_code: error.code,
    },
    'request refused before routing',
  );
  void send(reply, mapped.code, mapped.message, mapped.code === 'INVALID_REQUEST' ? 'path' : null);
}

/** The code and message of fastify's own refusals (bad JSON, body too large, …), or null for anything else. */
export function mapFastifyError(error: FastifyError): { code: ErrorCode; message: string } | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Unsupported content type; send application/json.' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'PAYLOAD_TOO_LARGE', message: 'Request body is larger than the server accepts.' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'INVALID_JSON', message: 'Body is empty but content-type is application/json.' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'INVALID_JSON', message: 'Request body is not valid JSON.' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'INVALID_REQUEST', message: 'Content-Length does not match the body.' };
    case 'FST_ERR_BAD_URL':
      return { code: 'INVALID_REQUEST', message: 'The path has a malformed percent-encoding.' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { code: 'INVALID_REQUEST', message: 'A path segment is too long.' };
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return { code: 'INVALID_JSON', message: `Request body is not valid JSON: ${error.message}` };
  }
  if (error.statusCode === 415) return { code: 'UNSUPPORTED_MEDIA_TYPE', message: error.message };
  if (error.statusCode === 413) return { code: 'PAYLOAD_TOO_LARGE', message: error.message };
  if (error.statusCode === 400) return { code: 'INVALID_REQUEST', message: error.message };
  return null;
}

/** `/conditions/0/key` in the body → `conditions[0].key`, the way clients name fields. */
function paramName(context: string, instancePath: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (parts.length === 0) return context;
  return parts.map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');
}
