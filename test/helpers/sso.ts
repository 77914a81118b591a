import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { createBrowser, oidcProviderForms, type Browser } from './browser.js';
import { apiClient, type ApiClient } from './http.js';
import type { TestOidcProvider } from './oidc-provider.js';

/** Where the test's "CLI" listens: only its address matters, the browser stops before it. */
export const LOOPBACK = 'http://127.0.0.1:9/callback';

/** A PKCE pair (RFC 7636, S256), as the CLI makes one per login. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function startUrl(
  baseUrl: string,
  path: string,
  params: { challenge: string; state?: string; workspace?: string; redirectUri?: string },
): URL {
  const url = new URL(`${baseUrl}${path}`);
  url.searchParams.set('redirect_uri', params.redirectUri ?? LOOPBACK);
  url.searchParams.set('code_challenge', params.challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  if (params.state) url.searchParams.set('state', params.state);
  if (params.workspace) url.searchParams.set('workspace', params.workspace);
  return url;
}

export const atLoopback = (url: URL) => url.href.startsWith(LOOPBACK);

/** Names the test OpenID provider as the organisation's identity provider. */
export async function configureOidc(owner: ApiClient, idp: TestOidcProvider, extra: Record<string, unknown> = {}) {
  const res = await owner.put('/v1/settings/sso', {
    oidc: { issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret },
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/**
 * Signs in through the OpenID provider as `account`, in a browser of its own; returns where the
 * browser was sent back to (the loopback address with code or error) and the PKCE verifier.
 */
export async function oidcSignIn(
  baseUrl: string,
  account: string,
  options: { workspace?: string; browser?: Browser } = {},
): Promise<{ back: URL; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const browser = options.browser ?? createBrowser();
  const back = await browser.follow(
    startUrl(baseUrl, '/v1/sso/oidc/start', { challenge, state: 'client-state', ...options }),
    atLoopback,
    oidcProviderForms(account),
  );
  return { back, verifier };
}

/** Exchanges the code for a session; fails the test when it cannot. */
export async function exchangeCode(baseUrl: string, back: URL, verifier: string) {
  const code = back.searchParams.get('code');
  expect(code, `no code: ${back.searchParams.get('error_description')}`).toBeTruthy();
  const res = await apiClient(baseUrl).post('/v1/sso/token', { code, code_verifier: verifier });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { session_token: string; session: any; user: any };
}

/** Signs in as `account` and returns the session. */
export async function oidcSession(baseUrl: string, account: string, options: { workspace?: string } = {}) {
  const { back, verifier } = await oidcSignIn(baseUrl, account, options);
  return exchangeCode(baseUrl, back, verifier);
}
