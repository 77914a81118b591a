import type { FastifyInstance } from 'fastify';
import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import { keyKind } from '../../auth/principal.js';
import { AppError } from '../../lib/errors.js';
import type { RouteAccess } from '../route-config.js';

export const API_KEY_HEADER = 'x-service-api-key';

const REJECTIONS = {
  malformed: 'The API key is malformed.',
  unknown: 'The API key is not valid.',
  revoked: 'The API key has been revoked.',
  expired: 'The API key has expired.',
} as const;

/**
 * Authenticates every request before its body is read, then checks the key type and scope
 * the route declared. Services check the finer rules (workspace, role) themselves.
 */
export function registerAuth(app: FastifyInstance, deps: { keys: ApiKeyVerifier; routes: RouteAccess[] }): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('auditResourceId', null);
  app.decorateRequest('auditWorkspaceId', null);

  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!auth) throw new Error(`route ${String(route.method)} ${route.url} declares no auth; every route must`);
    const method = Array.isArray(route.method) ? 'ANY' : String(route.method);
    if (method !== 'HEAD') deps.routes.push({ method, url: route.url, auth });
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const auth = request.routeOptions.config.auth;
    if (!auth || 'public' in auth) return;

    const raw = request.headers[API_KEY_HEADER];
    if (typeof raw !== 'string' || raw.length === 0) {
      throw new AppError('UNAUTHENTICATED', `Missing API key: send it in the ${API_KEY_HEADER} header.`);
    }
    const result = await deps.keys.verify(raw);
    if (!result.ok) throw new AppError('INVALID_API_KEY', REJECTIONS[result.reason]);

    const principal = result.principal;
    const kind = keyKind(principal);
    if (!auth.keyTypes.includes(kind)) {
      throw new AppError('KEY_TYPE_NOT_ALLOWED', `This route needs ${auth.keyTypes.map((k) => `an ${k === 'admin' ? 'admin' : 'a workspace'} key`).join(' or ')}; this is ${kind === 'admin' ? 'an admin' : 'a workspace'} key.`);
    }
    const scope = auth.scope === null || typeof auth.scope === 'string' ? auth.scope : auth.scope[kind];
    if (scope !== null && !principal.scopes.has(scope)) {
      throw new AppError('MISSING_SCOPE', `The API key lacks the scope ${scope}.`);
    }
    request.principal = principal;
  });
}
