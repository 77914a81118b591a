import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { effectiveWorkspaceRole } from '../../admin/shared/workspace-access.js';
import { KEY_PREFIX, type ApiKeyVerifier, type VerifyResult } from '../../auth/api-key-service.js';
import { serviceKeyInAuthorization } from '../../auth/bearer-key.js';
import { jwtLacksScope } from '../../auth/jwt/claims.js';
import { looksLikeJwt } from '../../auth/jwt/token-shape.js';
import { isOrgAdmin, keyKind, type Principal } from '../../auth/principal.js';
import { DATA_PLANE_SCOPES } from '../../auth/scopes.js';
import { isSessionToken } from '../../auth/sessions/session-token.js';
import type { SessionVerifier } from '../../auth/sessions/session-verifier.js';
import { featureDisabledError, type Feature, type FeatureFlags } from '../../features/flags.js';
import { AppError } from '../../lib/errors.js';
import type { ScimTokenVerifier } from '../../auth/scim-tokens.js';
import { authenticateScim } from './scim-auth.js';
import type { RouteAccess, RouteAuth, RouteRoles } from '../../http/route-config.js';
import type { JwtGate } from './jwt-auth.js';

export const API_KEY_HEADER = 'x-service-api-key';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key's principal once verified, also when the route then refuses it (for the refusal's log record). */
    verifiedPrincipal: Principal | null;
  }
}

const REJECTIONS = {
  malformed: 'The API key is malformed.',
  unknown: 'The API key is not valid.',
  revoked: 'The API key has been revoked.',
  expired: 'The API key has expired.',
  rotated: 'The API key was rotated and its transition period has ended; use the new key.',
  workspace_archived: 'The API key belongs to an archived workspace.',
  user_deactivated: "The API key's user is deactivated.",
} as const;

/** The features a route belongs to: those it declares, plus `api_access` for the control plane. */
export function routeFeatures(auth: RouteAuth, declared: Feature | readonly Feature[] | undefined): Feature[] {
  const features: Feature[] = declared === undefined ? [] : typeof declared === 'string' ? [declared] : [...declared];
  if (!('public' in auth)) {
    const scopes =
      'scim' in auth
        ? [null]
        : auth.scope === null
          ? [null]
          : typeof auth.scope === 'string'
            ? [auth.scope]
            : Object.values(auth.scope);
    const dataPlane = scopes.every((scope) => scope !== null && DATA_PLANE_SCOPES.has(scope));
    if (!dataPlane && !features.includes('api_access')) features.unshift('api_access');
  }
  return features;
}

/** Whether the key's user holds one of the roles; see RouteRoles for what counts. */
export function holdsRole(principal: Principal, roles: RouteRoles): boolean {
  if (Array.isArray(roles))
    return principal.orgRole !== null && (roles as readonly string[]).includes(principal.orgRole);
  const { workspace } = roles as { workspace: readonly string[] };
  const role =
    principal.workspaceId === null
      ? isOrgAdmin(principal)
        ? 'admin'
        : null
      : effectiveWorkspaceRole(principal, principal.workspaceId);
  return role !== null && workspace.includes(role);
}

export const describeRoles = (roles: RouteRoles): string =>
  Array.isArray(roles)
    ? `organisation ${(roles as readonly string[]).join(' or ')}`
    : `workspace ${(roles as { workspace: readonly string[] }).workspace.join(' or ')}`;

/**
 * Authenticates every request before its body is read, then checks, in this order, the
 * features, key type, scope and roles the route declared. Services check the finer rules
 * (the workspace a key reaches, rules that depend on the resource) themselves.
 */
export function registerAuth(
  app: FastifyInstance,
  deps: {
    keys: ApiKeyVerifier;
    routes: RouteAccess[];
    features: FeatureFlags;
    jwt: JwtGate;
    scim?: ScimTokenVerifier;
    sessions?: SessionVerifier;
  },
): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('verifiedPrincipal', null);
  app.decorateRequest('auditResourceId', null);
  app.decorateRequest('auditWorkspaceId', null);

  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!auth) throw new Error(`route ${String(route.method)} ${route.url} declares no auth; every route must`);
    const method = Array.isArray(route.method) ? 'ANY' : String(route.method);
    const features = routeFeatures(auth, route.config?.feature);
    // Once per route rather than on every request.
    route.config = { ...route.config, accessFeatures: features };
    if (method !== 'HEAD') deps.routes.push({ method, url: route.url, auth, features });
  });

  /** The principal of a key, or the refusal; a key with a fresh cache entry is answered without a promise. */
  function keyPrincipal(raw: string): Principal | Promise<Principal> {
    const result = deps.keys.verify(raw);
    return result instanceof Promise ? result.then(acceptedKey) : acceptedKey(result);
  }

  function credentialPrincipal(raw: string, request: FastifyRequest): Principal | Promise<Principal> {
    // svcgw keys first: neither a session token (`svs-…`) nor a JWT starts with `svc-`.
    if (raw.startsWith(KEY_PREFIX)) return keyPrincipal(raw);
    // A session from single sign-on (`svs-…`, docs/sso.md): the user acting, with their roles.
    // A JWT (docs/jwt.md) is told from a key by its shape; its refusals are audited there.
    if (deps.sessions && isSessionToken(raw)) return deps.sessions.authenticate(raw);
    if (looksLikeJwt(raw)) return deps.jwt(raw, request);
    return keyPrincipal(raw);
  }

  /**
   * The hook's work; returns a promise only when it has to wait (a key not in the cache, a JWT,
   * a session, SCIM), so that the usual request, a cached key, runs through without one.
   */
  function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    reply.header('x-request-id', request.id);
    reply.header('x-service-request-id', request.id); // the gateway's own id; a relayed answer may carry the provider's x-request-id
    const config = request.routeOptions.config;
    const auth = config.auth;
    if (!auth) return undefined;
    const disabled = deps.features.firstDisabled(config.accessFeatures ?? routeFeatures(auth, config.feature));
    if ('public' in auth) {
      if (disabled) throw featureDisabledError(disabled);
      return undefined;
    }
    if ('scim' in auth)
      return authenticateScim(deps.scim, request.headers).then((principal) => {
        request.principal = principal;
        if (disabled) throw featureDisabledError(disabled);
      });

    // Tools that take only a base URL and a key send it as a bearer token; an svcgw key is
    // recognised by its prefix, so a provider key in Authorization is left to the gateway.
    const raw = request.headers[API_KEY_HEADER] ?? serviceKeyInAuthorization(request.headers);
    if (typeof raw !== 'string' || raw.length === 0) {
      throw new AppError(
        'UNAUTHENTICATED',
        `Missing API key: send it in the ${API_KEY_HEADER} header (or as Authorization: Bearer svc-…).`,
      );
    }
    const principal = credentialPrincipal(raw, request);
    if (principal instanceof Promise) return principal.then((verified) => authorise(request, auth, disabled, verified));
    authorise(request, auth, disabled, principal);
    return undefined;
  }

  // A callback hook, not an async one: a synchronous answer costs no promise and no extra tick.
  // A throw here reaches fastify's error handler like a rejection does.
  app.addHook('onRequest', (request, reply, done) => {
    const pending = authenticate(request, reply);
    if (pending === undefined) done();
    else pending.then(() => done(), done);
  });
}

function acceptedKey(result: VerifyResult): Principal {
  if (!result.ok)
    throw new AppError(
      result.reason === 'workspace_archived' ? 'WORKSPACE_ARCHIVED' : 'INVALID_API_KEY',
      REJECTIONS[result.reason],
    );
  return result.principal;
}

/** The route's declared rules, once the caller is known. */
function authorise(
  request: FastifyRequest,
  auth: Extract<RouteAuth, { keyTypes: unknown }>,
  disabled: Feature | null,
  principal: Principal,
): void {
  request.verifiedPrincipal = principal;
  // After authentication, so that only callers with a key learn how the deployment is set up.
  if (disabled) throw featureDisabledError(disabled);

  const kind = keyKind(principal);
  if (!auth.keyTypes.includes(kind)) {
    throw new AppError(
      'KEY_TYPE_NOT_ALLOWED',
      `This route needs ${auth.keyTypes.map((k) => (k === 'admin' ? 'an admin key' : 'a workspace key')).join(' or ')}; this is ${kind === 'admin' ? 'an admin' : 'a workspace'} key.`,
    );
  }
  const scope = auth.scope === null || typeof auth.scope === 'string' ? auth.scope : auth.scope[kind];
  if (scope !== null && !principal.scopes.has(scope)) {
    throw new AppError(
      'MISSING_SCOPE',
      principal.authMethod === 'jwt' ? jwtLacksScope(scope) : `The API key lacks the scope ${scope}.`,
    );
  }
  if (auth.roles && !holdsRole(principal, auth.roles)) {
    throw new AppError(
      'ROLE_NOT_ALLOWED',
      `This operation needs the ${describeRoles(auth.roles)} role; the key's user does not have it.`,
    );
  }
  request.principal = principal;
}
