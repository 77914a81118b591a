import { KEY_PREFIX } from './api-key-service.js';
import { SESSION_PREFIX } from './sessions/session-token.js';

/**
 * The svcgw key (or session, `svs-…`) sent as `Authorization: Bearer svc-…`, when no `x-service-api-key` is sent:
 * then it authenticates the caller and is not a provider key. Null otherwise. Recognised by
 * its prefix, so that a provider key in Authorization keeps meaning what it meant.
 */
export function serviceKeyInAuthorization(headers: Record<string, string | string[] | undefined>): string | null {
  const authorization = headers.authorization;
  if (headers['x-service-api-key'] !== undefined || typeof authorization !== 'string') return null;
  if (authorization.slice(0, 7).toLowerCase() !== 'bearer ') return null;
  const token = authorization.slice(7).trim();
  return token.startsWith(KEY_PREFIX) || token.startsWith(SESSION_PREFIX) ? token : null;
}
