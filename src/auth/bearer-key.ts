import { KEY_PREFIX } from './api-key-service.js';
import { looksLikeJwt } from './jwt/token-shape.js';
import { SESSION_PREFIX } from './sessions/session-token.js';

/**
 * The caller's credential sent as `Authorization: Bearer …` when no `x-service-api-key` is sent:
 * an svcgw key (`svc-…`), a session from single sign-on (`svs-…`, docs/sso.md) or a JWT
 * (docs/jwt.md). Then it authenticates the caller and is not a provider key. Null otherwise.
 * Recognised by prefix or shape, so that a provider key in Authorization keeps meaning what it meant.
 */
export function serviceKeyInAuthorization(headers: Record<string, string | string[] | undefined>): string | null {
  const authorization = headers.authorization;
  if (headers['x-service-api-key'] !== undefined || typeof authorization !== 'string') return null;
  if (authorization.slice(0, 7).toLowerCase() !== 'bearer ') return null;
  const token = authorization.slice(7).trim();
  return token.startsWith(KEY_PREFIX) || token.startsWith(SESSION_PREFIX) || looksLikeJwt(token) ? token : null;
}
