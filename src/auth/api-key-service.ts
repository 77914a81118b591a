import type { Clock } from '../lib/clock.js';
import { digestsEqual, randomToken, sha256Hex } from '../lib/crypto.js';
import type { ApiKeyRepository, ApiKeyWithRoles } from '../storage/repositories/api-keys.js';
import type { Principal } from './principal.js';

/** Prefix of every key this server issues; also how people recognise a leaked one. */
export const KEY_PREFIX = 'svc-';
const RAW_KEY_RE = /^[A-Za-z0-9_.-]{32,256}$/;

export type VerifyResult =
  | { ok: true; principal: Principal }
  | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' | 'expired' };

interface CacheEntry {
  row: ApiKeyWithRoles;
  principal: Principal;
  loadedAt: number;
}

/** A new random key: 32 bytes of entropy, so a plain SHA-256 is a safe way to store it. */
export function generateRawKey(): string {
  return `${KEY_PREFIX}${randomToken(32)}`;
}

export const hashKey = (raw: string): string => sha256Hex(raw);

export const keyHint = (raw: string): string => `${raw.slice(0, 8)}****${raw.slice(-4)}`;

export const isWellFormedKey = (raw: string): boolean => RAW_KEY_RE.test(raw);

/**
 * Verifies raw keys against their stored hashes, keeping verified keys in memory so that the
 * gateway's hot path reads no database. Entries live at most `ttlMs` so that changes made by
 * another instance are seen; changes made here invalidate at once.
 */
export function createApiKeyVerifier(deps: { repo: ApiKeyRepository; clock: Clock; ttlMs: number }) {
  const byHash = new Map<string, CacheEntry>();

  async function load(hash: string): Promise<CacheEntry | undefined> {
    const cached = byHash.get(hash);
    if (cached && deps.clock.now() - cached.loadedAt < deps.ttlMs) return cached;
    const row = await deps.repo.findByHashWithRoles(hash);
    if (!row || !digestsEqual(row.key_hash, hash)) {
      byHash.delete(hash);
      return undefined;
    }
    const entry: CacheEntry = { row, principal: toPrincipal(row), loadedAt: deps.clock.now() };
    byHash.set(hash, entry);
    return entry;
  }

  return {
    async verify(raw: string): Promise<VerifyResult> {
      if (!isWellFormedKey(raw)) return { ok: false, reason: 'malformed' };
      const entry = await load(hashKey(raw));
      if (!entry) return { ok: false, reason: 'unknown' };
      const { row } = entry;
      if (row.status === 'revoked') return { ok: false, reason: 'revoked' };
      if (row.status === 'expired') return { ok: false, reason: 'expired' };
      if (row.expires_at !== null && Date.parse(row.expires_at) <= deps.clock.now()) return { ok: false, reason: 'expired' };
      return { ok: true, principal: entry.principal };
    },

    /** Forget a key after it changed (revoked, updated, rotated). */
    invalidate(keyId: string): void {
      for (const [hash, entry] of byHash) if (entry.row.id === keyId) byHash.delete(hash);
    },

    /** Forget every key, after a change that touches many (a user's role, a workspace). */
    invalidateAll(): void {
      byHash.clear();
    },
  };
}

export type ApiKeyVerifier = ReturnType<typeof createApiKeyVerifier>;

function toPrincipal(row: ApiKeyWithRoles): Principal {
  return Object.freeze({
    keyId: row.id,
    keyType: row.type,
    organisationId: row.organisation_id,
    workspaceId: row.workspace_id,
    userId: row.user_id,
    orgRole: row.org_role,
    workspaceRole: row.workspace_role,
    scopes: new Set<string>(JSON.parse(row.scopes) as string[]),
    rateLimits: row.rate_limits === null ? null : (JSON.parse(row.rate_limits) as Principal['rateLimits']),
    usageLimits: row.usage_limits === null ? null : (JSON.parse(row.usage_limits) as Principal['usageLimits']),
    keyCreatedAt: row.created_at,
    keyName: row.name,
  });
}
