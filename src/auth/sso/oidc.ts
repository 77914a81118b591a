import type * as OpenId from 'openid-client';
import { AppError } from '../../lib/errors.js';
import { looksLikeEmail, optionalName, type SsoIdentity } from './identity.js';
import { isLoopbackHost } from './loopback.js';

/** An organisation's OIDC identity provider, as its settings name it (the secret is apart). */
export interface OidcProviderSettings {
  issuer: string;
  client_id: string;
  /** Scopes the organisation adds to `openid email profile` (and to OIDC_CUSTOM_SCOPES). */
  scopes: readonly string[];
}

export interface OidcLoginStart {
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

const BASE_SCOPES = ['openid', 'email', 'profile'];

/** Plain HTTP is for an identity provider on this machine (development, tests); anything else needs TLS. */
export const isInsecureIssuerAllowed = (issuer: string): boolean => {
  if (!URL.canParse(issuer)) return false;
  const url = new URL(issuer);
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
};

/**
 * The relying party of the authorization code flow with PKCE, through openid-client: discovery
 * (cached per issuer, client and secret, so a settings change starts afresh), the authorization
 * URL, and the code exchange with every check the library makes (state, issuer, PKCE, the ID
 * token's signature, audience, expiry and nonce). Claims missing from the ID token are read from
 * the userinfo endpoint.
 */
export function createOidcClient(options: { extraScopes: readonly string[]; timeoutMs?: number }) {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const discovered = new Map<string, Promise<OpenId.Configuration>>();
  // openid-client is loaded on the first OIDC login, not by every server.
  let library: Promise<typeof OpenId> | undefined;
  const openid = () => (library ??= import('openid-client'));

  function configuration(settings: OidcProviderSettings, secret: string | null): Promise<OpenId.Configuration> {
    const cacheKey = JSON.stringify([settings.issuer, settings.client_id, secret]);
    let found = discovered.get(cacheKey);
    if (!found) {
      const insecure = new URL(settings.issuer).protocol === 'http:';
      found = openid()
        .then((client) =>
          client.discovery(
            new URL(settings.issuer),
            settings.client_id,
            secret ?? undefined,
            secret === null ? client.None() : client.ClientSecretBasic(secret),
            {
              ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
              timeout: Math.ceil(timeoutMs / 1000),
            },
          ),
        )
        .catch((error: unknown) => {
          discovered.delete(cacheKey);
          throw new AppError(
            'SSO_PROVIDER_UNAVAILABLE',
            `The OIDC provider ${settings.issuer} could not be discovered: ${describe(error)}`,
            { cause: error },
          );
        });
      discovered.set(cacheKey, found);
    }
    return found;
  }

  const scopesOf = (settings: OidcProviderSettings) =>
    [...new Set([...BASE_SCOPES, ...settings.scopes, ...options.extraScopes])].join(' ');

  return {
    /** Where to send the browser: the provider's authorization endpoint with PKCE, state and nonce. */
    async authorizationUrl(
      settings: OidcProviderSettings,
      secret: string | null,
      start: OidcLoginStart,
    ): Promise<string> {
      const config = await configuration(settings, secret);
      const client = await openid();
      return client
        .buildAuthorizationUrl(config, {
          redirect_uri: start.redirectUri,
          scope: scopesOf(settings),
          state: start.state,
          nonce: start.nonce,
          code_challenge: await client.calculatePKCECodeChallenge(start.codeVerifier),
          code_challenge_method: 'S256',
        })
        .toString();
    },

    /** Exchanges the code the provider sent back and reads who signed in. */
    async exchange(
      settings: OidcProviderSettings,
      secret: string | null,
      answer: { redirectUri: string; query: URLSearchParams; state: string; nonce: string; codeVerifier: string },
    ): Promise<SsoIdentity> {
      const config = await configuration(settings, secret);
      const client = await openid();
      const currentUrl = new URL(answer.redirectUri);
      for (const [name, value] of answer.query) currentUrl.searchParams.append(name, value);
      let tokens: Awaited<ReturnType<typeof OpenId.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(config, currentUrl, {
          pkceCodeVerifier: answer.codeVerifier,
          expectedState: answer.state,
          expectedNonce: answer.nonce,
          idTokenExpected: true,
        });
      } catch (error) {
        throw refusal(error);
      }
      const claims = tokens.claims();
      if (!claims) throw new AppError('SSO_LOGIN_FAILED', 'The OIDC provider returned no ID token.');
      let profile: Record<string, unknown> = claims;
      if (!looksLikeEmail(claims.email) && tokens.access_token && config.serverMetadata().userinfo_endpoint) {
        try {
          profile = { ...(await client.fetchUserInfo(config, tokens.access_token, claims.sub)), ...claims };
        } catch (error) {
          throw refusal(error);
        }
        // The ID token's claims win; userinfo fills what it lacks.
        for (const [name, value] of Object.entries(profile)) if (value === undefined) delete profile[name];
      }
      const email = profile.email;
      if (!looksLikeEmail(email))
        throw new AppError(
          'SSO_LOGIN_FAILED',
          'The OIDC provider did not say the e-mail address of the user (claim email); the client needs the email scope.',
        );
      return {
        protocol: 'oidc',
        subject: claims.sub,
        email: email.toLowerCase(),
        emailVerified: typeof profile.email_verified === 'boolean' ? profile.email_verified : null,
        firstName: optionalName(profile.given_name),
        lastName: optionalName(profile.family_name),
      };
    },

    /** Forgets discovered providers (after a settings change). */
    forget(): void {
      discovered.clear();
    },
  };
}

export type OidcClient = ReturnType<typeof createOidcClient>;

/**
 * The library's OAuth error answers, told by name: the library itself is loaded lazily, so its
 * classes are not at hand for `instanceof`.
 */
type OAuthErrorName = 'AuthorizationResponseError' | 'ResponseBodyError';
const isOAuthError = (
  error: unknown,
  name: OAuthErrorName,
): error is OpenId.AuthorizationResponseError | OpenId.ResponseBodyError =>
  error instanceof Error && error.name === name && typeof (error as { error?: unknown }).error === 'string';

function describe(error: unknown): string {
  if (isOAuthError(error, 'AuthorizationResponseError') || isOAuthError(error, 'ResponseBodyError'))
    return `${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  const cause = (error as { cause?: { code?: unknown } }).cause;
  const message = error instanceof Error ? error.message : String(error);
  return typeof cause?.code === 'string' ? `${message} (${cause.code})` : message;
}

/** What went wrong in the exchange, as the error the login ends with. */
function refusal(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isOAuthError(error, 'AuthorizationResponseError'))
    return new AppError('SSO_LOGIN_FAILED', `The OIDC provider refused the login: ${describe(error)}.`, {
      cause: error,
    });
  if (isOAuthError(error, 'ResponseBodyError'))
    return new AppError('SSO_LOGIN_FAILED', `The OIDC provider refused the code exchange: ${describe(error)}.`, {
      cause: error,
    });
  // A fetch that failed never reached the provider; anything else is a check that failed.
  if (error instanceof TypeError && (error as { cause?: unknown }).cause !== undefined)
    return new AppError('SSO_PROVIDER_UNAVAILABLE', `The OIDC provider could not be reached: ${describe(error)}`, {
      cause: error,
    });
  return new AppError('SSO_LOGIN_FAILED', `The OIDC provider's answer did not verify: ${describe(error)}`, {
    cause: error,
  });
}
