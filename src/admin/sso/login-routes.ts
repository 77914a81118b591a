import type { FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ZodApp } from '../../http/zod-app.js';
import type { SsoProtocol } from '../../storage/schema.js';
import { toSessionObject } from '../sessions/service.js';
import { toUserObject } from '../users/service.js';
import type { LoginService } from './login-service.js';
import {
  genericStartQuery,
  issuedSession,
  loginStartQuery,
  oidcCallbackQuery,
  samlAcsBody,
  tokenBody,
  type LoginStartQuery,
} from './schemas.js';

const TAG = ['Single sign-on'];
const PUBLIC = { auth: { public: true }, feature: 'api_access' } as const;
const redirect = { 302: z.null().describe('To the identity provider.') };
const backToClient = {
  303: z
    .null()
    .describe('To the client’s loopback redirect_uri, with code (or error, error_description, error_code) and state.'),
};
const START_DESCRIPTION =
  'Opened in the browser by the client (svcgw login --sso), which listens on redirect_uri. The identity provider’s answer comes back to svcgw, which provisions the user and redirects to redirect_uri with a one-time code; the client exchanges it at POST /v1/sso/token.';

/** The address clients reach this server at: the public_url setting, else the request's own. */
export type PublicBase = (request: FastifyRequest) => string;

/** The login routes are public: the identity provider's answer is the credential. */
export function registerLoginRoutes(app: ZodApp, deps: { login: LoginService; base: PublicBase }): void {
  const start = async (protocol: SsoProtocol, query: LoginStartQuery, request: FastifyRequest) =>
    deps.login.start(protocol, query, deps.base(request));

  app.get(
    '/v1/sso/start',
    {
      schema: {
        tags: TAG,
        summary: 'Start signing in with the organisation’s identity provider',
        description: `${START_DESCRIPTION} protocol picks OIDC or SAML; default: the one configured (OIDC when both are).`,
        security: [],
        querystring: genericStartQuery,
        response: redirect,
      },
      config: PUBLIC,
    },
    async (request, reply) => {
      const { protocol, ...query } = request.query;
      return reply.redirect(await start(protocol ?? (await deps.login.defaultProtocol()), query, request), 302);
    },
  );

  for (const protocol of ['oidc', 'saml'] as const) {
    app.get(
      `/v1/sso/${protocol}/start`,
      {
        schema: {
          tags: TAG,
          summary: `Start signing in with the organisation’s ${protocol === 'oidc' ? 'OIDC provider (authorization code with PKCE)' : 'SAML identity provider'}`,
          description: START_DESCRIPTION,
          security: [],
          querystring: loginStartQuery,
          response: redirect,
        },
        config: PUBLIC,
      },
      async (request, reply) => reply.redirect(await start(protocol, request.query, request), 302),
    );
  }

  app.get(
    '/v1/sso/oidc/callback',
    {
      schema: {
        tags: TAG,
        summary: 'The OIDC provider’s redirect (register this URL at the provider)',
        description:
          'Exchanges the code (PKCE, state, nonce and the ID token checked), provisions the user, and sends the browser back to the client. An unknown state is a 401 SSO_LOGIN_FAILED here; every other refusal goes back to the client.',
        security: [],
        querystring: oidcCallbackQuery,
        response: backToClient,
      },
      config: PUBLIC,
    },
    async (request, reply) => reply.redirect(await deps.login.oidcCallback(request.query), 303),
  );

  app.get(
    '/v1/sso/saml/metadata',
    {
      schema: {
        tags: TAG,
        summary: 'This server’s SAML service provider metadata (for the identity provider)',
        security: [],
        response: { 200: z.string().describe('SAML 2.0 metadata (XML).') },
      },
      config: PUBLIC,
    },
    async (request, reply) =>
      reply.type('application/samlmetadata+xml; charset=utf-8').send(await deps.login.samlMetadata(deps.base(request))),
  );

  app.post(
    '/v1/sso/token',
    {
      schema: {
        tags: TAG,
        summary: 'Exchange the one-time login code for a session',
        description:
          'The code from the loopback redirect and the PKCE code_verifier of the login. The session token is shown only here; it expires after session_settings.max_session_ttl (default 86400 s). Codes work once, within 10 minutes of the start.',
        security: [],
        body: tokenBody,
        response: { 200: issuedSession },
      },
      config: {
        ...PUBLIC,
        audit: { resourceType: 'session', action: 'create', secretFields: ['code', 'code_verifier'] },
      },
    },
    async (request) => {
      const userAgent = request.headers['user-agent'];
      const issued = await deps.login.exchange(request.body, {
        userAgent: typeof userAgent === 'string' ? userAgent : null,
        ip: request.ip,
      });
      // The audit record names the new session and its user as the actor.
      request.principal = issued.principal;
      request.auditResourceId = issued.session.id;
      return {
        object: 'session_token' as const,
        session_token: issued.token,
        session: toSessionObject(issued.session, issued.maxSessionTtl, Date.parse(issued.session.created_at)),
        user: toUserObject(issued.user, issued.workspaceIds),
      };
    },
  );
}

/**
 * The assertion consumer service takes the form post of the SAML HTTP-POST binding, in a scope of
 * its own so that no other route accepts form bodies.
 */
export async function registerSamlAcsRoute(app: ZodApp, login: LoginService): Promise<void> {
  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<ZodTypeProvider>();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    scope.post(
      '/v1/sso/saml/acs',
      {
        schema: {
          tags: TAG,
          summary:
            'The SAML assertion consumer service (HTTP-POST binding; register this URL at the identity provider)',
          description:
            'Validates the response: the assertion must be signed with the configured certificate, name svcgw’s entity id as audience, answer this login’s AuthnRequest and be within its validity window. Then provisions the user and sends the browser back to the client. An unknown RelayState is a 401 SSO_LOGIN_FAILED here; every other refusal (an unsigned or altered assertion included) goes back to the client.',
          security: [],
          consumes: ['application/x-www-form-urlencoded'],
          body: samlAcsBody,
          response: backToClient,
        },
        config: PUBLIC,
      },
      async (request, reply) => reply.redirect(await login.samlAcs(request.body), 303),
    );
  });
}
