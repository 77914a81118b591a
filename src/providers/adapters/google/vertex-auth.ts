import { createHash } from 'node:crypto';
import type { CryptoKey } from 'jose';
import { request, type Dispatcher } from 'undici';
import { AppError } from '../../../lib/errors.js';
import { isObject } from './gemini-types.js';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google accepts assertions valid for at most one hour. */
const ASSERTION_SECONDS = 3600;
const REFRESH_MARGIN_SECONDS = 300;
const TOKEN_TIMEOUT_MS = 30_000;

export interface ServiceAccount {
  clientEmail: string;
  privateKey: string;
  privateKeyId?: string | undefined;
  tokenUri: string;
  projectId?: string | undefined;
}

const configError = (message: string) => new AppError('PROVIDER_CONFIG', message, { param: 'x-service-provider' });

/**
 * A service-account key as Google issues it (JSON), given as an object, as JSON text or as
 * base64 of the JSON (the header form). Messages name what is wrong, never the key's content.
 */
export function parseServiceAccount(value: unknown, source: string): ServiceAccount {
  let json: unknown = value;
  if (typeof value === 'string') {
    const text = value.trim();
    try {
      json = JSON.parse(text.startsWith('{') ? text : Buffer.from(text, 'base64').toString('utf8'));
    } catch {
      throw configError(`The Vertex AI service account in ${source} is neither JSON nor base64 of JSON.`);
    }
  }
  if (!isObject(json) || typeof json.client_email !== 'string' || typeof json.private_key !== 'string') {
    throw configError(`The Vertex AI service account in ${source} needs client_email and private_key.`);
  }
  const tokenUri = typeof json.token_uri === 'string' ? json.token_uri : DEFAULT_TOKEN_URI;
  let parsed: URL;
  try {
    parsed = new URL(tokenUri);
  } catch {
    throw configError(`The token_uri of the Vertex AI service account in ${source} is not a URL.`);
  }
  if (
    (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') ||
    parsed.username !== '' ||
    parsed.password !== ''
  ) {
    throw configError(
      `The token_uri of the Vertex AI service account in ${source} must be an http(s) URL without credentials.`,
    );
  }
  return {
    clientEmail: json.client_email,
    privateKey: json.private_key,
    privateKeyId: typeof json.private_key_id === 'string' ? json.private_key_id : undefined,
    tokenUri,
    projectId: typeof json.project_id === 'string' ? json.project_id : undefined,
  };
}

interface CachedToken {
  token: string;
  /** Milliseconds (ctx.now()) after which the token is refreshed. */
  refreshAt: number;
}

/** Access tokens by service account and scope, so that each is minted about once an hour. */
export interface TokenCache {
  accessToken(account: ServiceAccount, scope: string, dispatcher: Dispatcher, now: () => number): Promise<string>;
}

/**
 * The key hashes the private key and token URI along with the account: a caller who knows an
 * account's email but not its key must never be handed that account's cached token.
 */
function cacheKey(account: ServiceAccount, scope: string): string {
  return createHash('sha256')
    .update(JSON.stringify([account.clientEmail, scope, account.tokenUri, account.privateKey]))
    .digest('hex');
}

export function createTokenCache(maxEntries = 256): TokenCache {
  const tokens = new Map<string, CachedToken>();
  const pending = new Map<string, Promise<CachedToken>>();
  return {
    async accessToken(account, scope, dispatcher, now) {
      const key = cacheKey(account, scope);
      const cached = tokens.get(key);
      if (cached && now() < cached.refreshAt) return cached.token;
      // Requests that arrive while a token is being minted wait for that one.
      let minting = pending.get(key);
      if (!minting) {
        minting = mintAccessToken(account, scope, dispatcher, now).finally(() => pending.delete(key));
        pending.set(key, minting);
      }
      const fresh = await minting;
      tokens.delete(key);
      tokens.set(key, fresh);
      if (tokens.size > maxEntries) tokens.delete(tokens.keys().next().value as string);
      return fresh.token;
    },
  };
}

async function signAssertion(account: ServiceAccount, scope: string, nowSeconds: number): Promise<string> {
  // jose is loaded when a service account first signs in, not by every gateway.
  const { importPKCS8, SignJWT } = await import('jose');
  let key: CryptoKey;
  try {
    key = await importPKCS8(account.privateKey, 'RS256');
  } catch {
    throw configError('The private_key of the Vertex AI service account is not a PKCS#8 PEM RSA key.');
  }
  return new SignJWT({ scope })
    .setProtectedHeader(
      account.privateKeyId ? { alg: 'RS256', typ: 'JWT', kid: account.privateKeyId } : { alg: 'RS256', typ: 'JWT' },
    )
    .setIssuer(account.clientEmail)
    .setAudience(account.tokenUri)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(nowSeconds + ASSERTION_SECONDS)
    .sign(key);
}

/** The JWT-bearer grant (RFC 7523) at the account's token_uri. */
async function mintAccessToken(
  account: ServiceAccount,
  scope: string,
  dispatcher: Dispatcher,
  now: () => number,
): Promise<CachedToken> {
  const issuedAt = now();
  const assertion = await signAssertion(account, scope, Math.floor(issuedAt / 1000));
  const where = new URL(account.tokenUri).origin;
  let status: number;
  let text: string;
  try {
    const res = await request(account.tokenUri, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }).toString(),
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    });
    status = res.statusCode;
    text = await res.body.text();
  } catch {
    throw new AppError('UPSTREAM_UNREACHABLE', `The Vertex AI token endpoint at ${where} could not be reached.`);
  }
  let answer: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) answer = parsed;
  } catch {
    // reported below
  }
  if (status >= 400 || typeof answer.access_token !== 'string') {
    const reason = [answer.error, answer.error_description]
      .filter((part) => typeof part === 'string')
      .join(': ')
      .slice(0, 300);
    throw new AppError(
      'UPSTREAM_ERROR',
      `The Vertex AI token exchange at ${where} failed with HTTP ${status}${reason ? ` (${reason})` : ''}.`,
    );
  }
  const lifetime =
    typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : ASSERTION_SECONDS;
  const margin = Math.min(REFRESH_MARGIN_SECONDS, lifetime / 2);
  return { token: answer.access_token, refreshAt: issuedAt + (lifetime - margin) * 1000 };
}
