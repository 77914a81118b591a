import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { onTestFinished } from 'vitest';
import { listenOnLoopback } from './loopback-server.js';

export interface TestAccount {
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The query of every authorization request the provider received, in order. */
  authorizations: URLSearchParams[];
  close(): Promise<void>;
}

/**
 * A real OpenID provider (oidc-provider, certified) on 127.0.0.1 with one confidential client
 * for svcgw. Its development interactions (a login form taking any account id, then a consent
 * form) are what the test's browser fills in; `accounts` says who each account id is.
 */
export async function startOidcProvider(options: {
  redirectUris: string[];
  accounts: Record<string, TestAccount>;
  /** Scopes the provider knows besides openid, email and profile (unknown ones it drops). */
  extraScopes?: string[];
}): Promise<TestOidcProvider> {
  const server = createServer();
  const listening = await listenOnLoopback(server);
  const clientId = 'svcgw';
  const clientSecret = 'svcgw-test-client-secret-0123456789';
  const provider = new Provider(listening.url, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    async findAccount(_ctx: unknown, id: string) {
      const account = options.accounts[id];
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...account }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name'] },
    scopes: ['openid', 'email', 'profile', ...(options.extraScopes ?? [])],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['svcgw-test-cookie-key'] },
  });
  const authorizations: URLSearchParams[] = [];
  const handle = provider.callback();
  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', listening.url);
    if (url.pathname === '/auth') authorizations.push(url.searchParams);
    handle(req, res);
  });
  onTestFinished(() => listening.close());
  return { issuer: listening.url, clientId, clientSecret, authorizations, close: () => listening.close() };
}
