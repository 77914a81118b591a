import type { FastifyError, FastifyInstance } from 'fastify';
import { ScimError } from '../../admin/scim/protocol/scim-errors.js';
import { SCIM_CONTENT_TYPE, URN } from '../../admin/scim/protocol/schema-urns.js';
import { AppError, codeToStatus } from '../../lib/errors.js';
import { exceedsJsonDepth, jsonTooDeepMessage } from '../../lib/json-depth.js';
import { uniqueViolation } from '../../storage/unique-violation.js';
import { mapFastifyError } from './errors.js';

/** The SCIM error schema (RFC 7644 §3.12): `status` is a string; `scimType` when there is one. */
const scimError = (status: number, detail: string, scimType: string | null = null) => ({
  schemas: [URN.error],
  status: String(status),
  ...(scimType ? { scimType } : {}),
  detail,
});

/**
 * What the SCIM routes' scope needs beyond the rest of the API: bodies sent as
 * application/scim+json (parsed like JSON, behind the same depth limit), and errors answered in
 * the SCIM error schema, since SCIM clients read `status`, `scimType` and `detail` rather than
 * svcgw's error body. The status and message are those of the same error elsewhere; unexpected
 * failures are logged and answered with a generic 500, as everywhere.
 */
export function registerScimProtocol(scope: FastifyInstance): void {
  const parseJson = scope.getDefaultJsonParser('error', 'error');
  scope.addContentTypeParser('application/scim+json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (exceedsJsonDepth(text)) return done(new AppError('INVALID_JSON', jsonTooDeepMessage()), undefined);
    return parseJson(request, text, done);
  });

  scope.setErrorHandler((error: FastifyError | Error, request, reply) => {
    let status: number;
    let detail: string;
    let scimType: string | null = null;
    const mapped = error instanceof AppError ? null : mapFastifyError(error as FastifyError);
    if (error instanceof AppError) {
      status = error.status;
      detail = error.message;
      scimType =
        error instanceof ScimError
          ? error.scimType
          : error.code === 'INVALID_JSON'
            ? 'invalidSyntax'
            : error.code === 'CONFLICT'
              ? 'uniqueness'
              : null;
    } else if (mapped) {
      status = codeToStatus(mapped.code);
      detail = mapped.message;
      if (mapped.code === 'INVALID_JSON') scimType = 'invalidSyntax';
    } else if (uniqueViolation(error)) {
      // Two providers' requests raced for one userName or group name.
      status = 409;
      detail = 'Another resource already has this unique value.';
      scimType = 'uniqueness';
    } else {
      request.log.error({ err: error }, 'unhandled error');
      status = 500;
      detail = `Internal server error (request id ${request.id}).`;
    }
    return reply
      .code(status)
      .type(SCIM_CONTENT_TYPE)
      .send(scimError(status, detail, scimType));
  });
}
