import type { ProtectedHeaderParameters } from 'jose';
import { jose } from './jose.js';
import { JwksUnavailableError } from './jwks-cache.js';
import type { JwtSettings } from './settings.js';

/** Why a JWT was refused; the audit record's `resource_id`, and documented in docs/jwt.md. */
export type JwtFailureReason =
  | 'not_configured'
  | 'disabled'
  | 'malformed'
  | 'unknown_issuer'
  | 'algorithm_not_allowed'
  | 'unknown_kid'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'missing_claim'
  | 'invalid_claim'
  | 'wrong_organisation'
  | 'unknown_workspace'
  | 'workspace_archived'
  | 'unknown_user'
  | 'not_a_member'
  | 'user_deactivated'
  | 'jwks_unavailable';

/** A refusal, with what the audit record can say about whom (ids only once the signature verified). */
export interface JwtFailure {
  ok: false;
  reason: JwtFailureReason;
  /** For the client and the audit record; never holds the token. */
  message: string;
  organisationId: string | null;
  workspaceId: string | null;
  keyId: string | null;
  userId: string | null;
}

/** Claim values a client chose, quoted into messages: short, and one line. */
export const quote = (value: unknown): string => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
};

const iso = (seconds: unknown) =>
  typeof seconds === 'number' && Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : quote(seconds);

/**
 * What went wrong in jose's verification, told the way a client can act on it. Null for errors
 * that are not the token's fault and not the JWKS's (they become a 500 like any other bug).
 */
export function describeVerifyError(
  error: unknown,
  header: ProtectedHeaderParameters,
  settings: JwtSettings,
): { reason: JwtFailureReason; message: string } | null {
  const tolerance = `clock tolerance ${settings.clock_tolerance_seconds} s`;
  if (error instanceof JwksUnavailableError)
    return {
      reason: 'jwks_unavailable',
      message: `The token could not be checked: ${error.message}. Try again shortly.`,
    };
  // An error of jose's comes from a loaded jose: without it, the error is none of these.
  const errors = jose.loaded()?.errors;
  if (!errors) return null;
  if (error instanceof errors.JWKInvalid)
    return {
      reason: 'jwks_unavailable',
      message: `The token could not be checked: a key of the JWKS is not usable (${error.message}).`,
    };
  if (error instanceof errors.JWTExpired) {
    const payload = error.payload;
    return { reason: 'expired', message: `The token expired at ${iso(payload.exp)} (${tolerance}).` };
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    const payload = error.payload;
    if (error.reason === 'missing')
      return {
        reason: 'missing_claim',
        message:
          error.claim === 'exp'
            ? 'The token has no "exp" claim: tokens must expire.'
            : `The token has no "${error.claim}" claim.`,
      };
    if (error.claim === 'nbf' && error.reason === 'check_failed')
      return { reason: 'not_yet_valid', message: `The token is not valid before ${iso(payload.nbf)} (${tolerance}).` };
    if (error.claim === 'aud')
      return {
        reason: 'wrong_audience',
        message: `The token's audience ${quote(payload.aud ?? null)} is not one this server accepts (${(settings.audience ?? []).join(', ')}).`,
      };
    if (error.claim === 'iss')
      return { reason: 'unknown_issuer', message: `The token's issuer ${quote(payload.iss ?? null)} is not accepted.` };
    return { reason: 'invalid_claim', message: `The token's "${error.claim}" claim is not valid: ${error.message}.` };
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return {
      reason: 'algorithm_not_allowed',
      message: `The token is signed with ${quote(header.alg)}; accepted algorithms: ${settings.algorithms.join(', ')}.`,
    };
  if (error instanceof errors.JWKSNoMatchingKey)
    return {
      reason: 'unknown_kid',
      message:
        header.kid === undefined
          ? 'No key of the JWKS can verify the token (it names no kid).'
          : `No key of the JWKS has the token's key id (kid ${quote(header.kid)}), also after fetching the JWKS again.`,
    };
  if (error instanceof errors.JWKSMultipleMatchingKeys)
    return {
      reason: 'unknown_kid',
      message: 'The token names no kid and several keys of the JWKS could have signed it; tokens must name their kid.',
    };
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return {
      reason: 'bad_signature',
      message: `The token's signature does not verify with the JWKS key${header.kid === undefined ? '' : ` ${quote(header.kid)}`}.`,
    };
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  )
    return { reason: 'malformed', message: `The token is not a valid JWT: ${error.message}.` };
  return null;
}
