import type { Clock } from '../lib/clock.js';
import { digestsEqual, randomToken, sha256Hex } from '../lib/crypto.js';
import type { ScimTokenRepository, ScimTokenRow } from '../storage/repositories/scim-tokens.js';
import type { Principal } from './principal.js';

/** Prefix of every SCIM token, so that one pasted in the wrong place is recognised. */
export const SCIM_TOKEN_PREFIX = 'scim-';
const RAW_TOKEN_RE = /^scim-[A-Za-z0-9_-]{43}$/;

/** A new token: 32 random bytes, so a plain SHA-256 is a safe way to store it. */
export const generateScimToken = (): string => `${SCIM_TOKEN_PREFIX}${randomToken(32)}`;
export const hashScimToken = (raw: string): string => sha256Hex(raw);
export const scimTokenHint = (raw: string): string => `${raw.slice(0, 9)}****${raw.slice(-4)}`;

export type ScimTokenResult =
  { ok: true; principal: Principal } | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' | 'expired' };

/**
 * Checks SCIM tokens against their stored hashes. Nothing is cached: provisioning traffic is
 * light, and a revoked token must stop working at once on every instance.
 */
export function createScimTokenVerifier(deps: { repo: Pick<ScimTokenRepository, 'findByHash'>; clock: Clock }) {
  return {
    async verify(raw: string): Promise<ScimTokenResult> {
      if (!RAW_TOKEN_RE.test(raw)) return { ok: false, reason: 'malformed' };
      const hash = hashScimToken(raw);
      const row = await deps.repo.findByHash(hash);
      if (!row || !digestsEqual(row.token_hash, hash)) return { ok: false, reason: 'unknown' };
      if (row.status !== 'active') return { ok: false, reason: 'revoked' };
      if (row.expires_at !== null && Date.parse(row.expires_at) <= deps.clock.now())
        return { ok: false, reason: 'expired' };
      return { ok: true, principal: scimPrincipal(row) };
    },
  };
}

export type ScimTokenVerifier = ReturnType<typeof createScimTokenVerifier>;

/**
 * The caller on SCIM routes: the organisation's identity provider. It holds no scope and no
 * user, so it passes no route but the SCIM ones; audit records name the token as the key.
 */
function scimPrincipal(row: ScimTokenRow): Principal {
  return Object.freeze({
    authMethod: 'scim' as const,
    keyId: row.id,
    keyType: 'organisation-service' as const,
    organisationId: row.organisation_id,
    workspaceId: null,
    userId: null,
    orgRole: null,
    workspaceRole: null,
    scopes: new Set<string>(),
    rateLimits: null,
    usageLimits: null,
    keyCreatedAt: row.created_at,
    keyName: row.name,
    defaults: null,
  });
}
