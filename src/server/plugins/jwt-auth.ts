import type { FastifyRequest } from 'fastify';
import type { JwtAuthenticator } from '../../auth/jwt/jwt-authenticator.js';
import type { JwtFailure } from '../../auth/jwt/failures.js';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, type ErrorCode } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { redactSecrets, safeJson } from '../../lib/redact.js';
import type { AuditLogRepository } from '../../storage/repositories/audit-logs.js';
import { clientCountry } from '../../lib/client-country.js';

/** Authenticates a request that carries a JWT; throws the refusal after recording it. */
export type JwtGate = (token: string, request: FastifyRequest) => Promise<Principal>;

const codeOf = (failure: JwtFailure): ErrorCode =>
  failure.reason === 'jwks_unavailable'
    ? 'JWKS_UNAVAILABLE'
    : failure.reason === 'expired'
      ? 'JWT_EXPIRED'
      : 'INVALID_JWT';

/**
 * The auth hook's JWT branch. Every refusal is answered in the one error body with a message
 * that says what was wrong, and written to the audit log as it happens (the spec asks for
 * both): action `authenticate`, resource type `jwt`, resource id the reason, `detail` the
 * message. The record never holds the token; it names the caller's key id and user only once
 * the signature verified, since unverified claims are anyone's to write.
 */
export function createJwtGate(deps: {
  authenticator: JwtAuthenticator;
  /** Null when AUDIT_LOGS_ENABLED is OFF. */
  audit: AuditLogRepository | null;
  clock: Clock;
}): JwtGate {
  return async (token, request) => {
    const result = await deps.authenticator.authenticate(token);
    if (result.ok) return result.principal;
    const error = new AppError(codeOf(result), result.message);
    await record(deps, request, result, error.status);
    throw error;
  };
}

async function record(
  deps: { audit: AuditLogRepository | null; clock: Clock },
  request: FastifyRequest,
  failure: JwtFailure,
  status: number,
): Promise<void> {
  if (!deps.audit) return;
  if (failure.organisationId === null) {
    // Several organisations and a token none of them accepts: there is no log to put it in.
    request.log.warn({ reason: failure.reason }, 'JWT refused; no organisation to audit it under');
    return;
  }
  const query = request.query;
  await deps.audit
    .insert({
      id: newId(),
      organisation_id: failure.organisationId,
      workspace_id: failure.workspaceId,
      timestamp: new Date(deps.clock.now()).toISOString(),
      actor_type: 'jwt',
      actor_key_id: failure.keyId,
      actor_user_id: failure.userId,
      action: 'authenticate',
      resource_type: 'jwt',
      resource_id: failure.reason,
      method: request.method,
      path: request.url.split('?')[0] ?? request.url,
      query:
        query && typeof query === 'object' && Object.keys(query).length > 0 ? safeJson(redactSecrets(query)) : null,
      request_body: null,
      response_status_code: status,
      client_ip: request.ip,
      country: clientCountry(request.headers),
      request_id: request.id,
      detail: failure.message,
    })
    .catch((error: unknown) =>
      request.log.error({ err: error, reason: failure.reason }, 'audit record of a refused JWT could not be written'),
    );
}
