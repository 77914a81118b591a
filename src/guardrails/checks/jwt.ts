import type * as Jose from 'jose';
import type { FetchImplementation, JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import { lazyModule } from '../../lib/lazy.js';
import { defineCheck } from '../define-check.js';
import { guardedFetch } from '../net/guarded-fetch.js';
import { httpUrl } from './webhook.js';

/** Asymmetric JWS algorithms only: a JWKS publishes public keys, and `none` is never a signature. */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
/** What jose accepts as a duration ("1d", "2 hours", "30m"). */
const DURATION = /^\d+(\.\d+)? ?(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)$/i;
const JWKS_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 1024 * 1024;

/** jose, imported by the check's first run: most servers never run it (~0.55 MB of heap). */
const jose = lazyModule<typeof Jose>(() => import('jose'));

/** jose caches a JWKS per resolver: keep one resolver per (URI, max age, address policy). */
const resolvers = new Map<string, JWTVerifyGetKey>();

function resolverFor(
  { createRemoteJWKSet, customFetch }: typeof Jose,
  uri: string,
  cacheMaxAgeMs: number,
  allowPrivate: boolean,
  allowHosts: readonly string[],
): JWTVerifyGetKey {
  const key = JSON.stringify([uri, cacheMaxAgeMs, allowPrivate, allowHosts]);
  const hit = resolvers.get(key);
  if (hit) return hit;
  const fetchJwks: FetchImplementation = async (url, options) => {
    const answer = await guardedFetch(url, {
      allowPrivate,
      allowHosts,
      headers: Object.fromEntries(options.headers.entries()),
      signal: options.signal,
      maxRedirects: 0,
      maxBytes: MAX_JWKS_BYTES,
    });
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  };
  const resolver = createRemoteJWKSet(new URL(uri), {
    cacheMaxAge: cacheMaxAgeMs,
    timeoutDuration: JWKS_TIMEOUT_MS,
    [customFetch]: fetchJwks,
  });
  if (resolvers.size >= 100) resolvers.delete(resolvers.keys().next().value!);
  resolvers.set(key, resolver);
  return resolver;
}

/** jose's codes for a token that is wrong (as opposed to a JWKS that could not be read). */
const TOKEN_CODES = new Set([
  'ERR_JWT_EXPIRED',
  'ERR_JWT_CLAIM_VALIDATION_FAILED',
  'ERR_JWT_INVALID',
  'ERR_JWS_INVALID',
  'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
  'ERR_JWKS_NO_MATCHING_KEY',
  'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
  'ERR_JOSE_ALG_NOT_ALLOWED',
  'ERR_JOSE_NOT_SUPPORTED',
]);

/**
 * Verifies the JWT in the request header `headerKey` (a `Bearer ` prefix is dropped) against
 * the keys published at `jwksUri`: signature, `exp`/`nbf` with `clockTolerance` seconds of
 * slack, and an `iat` no older than `maxTokenAge`. A wrong token fails the check; a JWKS that
 * cannot be fetched is an error, which fails it too (fail closed).
 */
export const jwt = defineCheck({
  id: 'default.jwt',
  hooks: ['beforeRequestHook'],
  parameters: z.strictObject({
    jwksUri: httpUrl,
    headerKey: z.string().min(1).max(256),
    algorithms: z.array(z.enum(ALGORITHMS)).min(1).default(['RS256']),
    cacheMaxAge: z.number().int().min(0).max(31_536_000).default(86_400),
    clockTolerance: z.number().int().min(0).max(3_600).default(5),
    maxTokenAge: z.string().regex(DURATION, 'a duration such as "1d", "12h" or "30 minutes"').default('1d'),
  }),
  timeoutMs: () => JWKS_TIMEOUT_MS + 1_000,
  async run(context, p) {
    const raw = context.request.headers[p.headerKey.toLowerCase()];
    if (!raw) return { verdict: false, explanation: `The ${p.headerKey} header is missing.` };
    const token = raw.replace(/^Bearer\s+/i, '').trim();
    const loaded = jose.loaded() ?? (await jose());
    const keys = resolverFor(
      loaded,
      p.jwksUri,
      p.cacheMaxAge * 1000,
      context.server.allowPrivateCheckEndpoints,
      context.server.privateHostAllowlist ?? [],
    );
    try {
      const { payload } = await loaded.jwtVerify(token, keys, {
        algorithms: p.algorithms,
        clockTolerance: p.clockTolerance,
        maxTokenAge: p.maxTokenAge,
      });
      return {
        verdict: true,
        explanation: 'The JWT is valid.',
        data: { sub: payload.sub ?? null, iss: payload.iss ?? null, exp: payload.exp ?? null },
      };
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      if (TOKEN_CODES.has(code))
        return {
          verdict: false,
          explanation: `The JWT is not valid: ${(error as Error).message}.`,
          data: { reason: code },
        };
      throw new Error(`jwt: ${(error as Error).message}`, { cause: error });
    }
  },
});
