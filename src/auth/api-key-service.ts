import type { Clock } from '../lib/clock.js';
import { digestsEqual, randomToken, sha256Hex } from '../lib/crypto.js';
import type { ApiKeyRepository, ApiKeyWithRoles } from '../storage/repositories/api-keys.js';
import type { Principal } from './principal.js';

/** Prefix of every key this server issues; also how people recognise a leaked one. */
export const KEY_PREFIX = 'svc-';
const RAW_KEY_RE = /^[A-Za-z0-9_.-]{32,256}$/;

/** `rotated`: a rotated-out secret whose transition period has ended. */
export type VerifyResult =
  | { ok: true; principal: Principal }
  | {
      ok: false;
      reason: 'malformed' | 'unknown' | 'revoked' | 'expired' | 'rotated' | 'workspace_archived' | 'user_deactivated';
    };

interface CacheEntry {
  row: ApiKeyWithRoles;
  /** The answer for a key that passes the checks, built once per load rather than per request. */
  accepted: VerifyResult & { ok: true };
  loadedAt: number;
  /** The raw key is the previous secret of the row (valid until `previous_key_expires_at`). */
  previous: boolean;
  /** `expires_at` and `previous_key_expires_at` as epoch ms (null: none), parsed once per load. */
  expiresAt: number | null;
  previousExpiresAt: number | null;
}

type Refusal = Extract<VerifyResult, { ok: false }>;
const refusal = (reason: Refusal['reason']): Refusal => Object.freeze({ ok: false, reason });
const REFUSED = {
  malformed: refusal('malformed'),
  unknown: refusal('unknown'),
  revoked: refusal('revoked'),
  expired: refusal('expired'),
  rotated: refusal('rotated'),
  workspace_archived: refusal('workspace_archived'),
  user_deactivated: refusal('user_deactivated'),
} as const;

const epochMs = (iso: string | null): number | null => (iso === null ? null : Date.parse(iso));

const DAY_MS = 24 * 60 * 60 * 1000;

/** Raw keys whose hash is remembered; a client sends the same few keys on every request. */
const MAX_MEMOISED_HASHES = 10_000;

/** The spec's minimum transition, and the default when neither the request nor the policy sets one. */
export const MIN_TRANSITION_MS = 1_800_000;
/** An upper bound, so that a transition end is always a representable date. */
export const MAX_TRANSITION_MS = 365 * DAY_MS;

export type RotationPeriod = 'weekly' | 'monthly';

/** The shortest length of each period; a transition must be shorter, so it ends before the next rotation. */
export const ROTATION_PERIOD_MS: Record<RotationPeriod, number> = { weekly: 7 * DAY_MS, monthly: 28 * DAY_MS };

/** What `api_keys.rotation_policy` holds; the due time is the `next_rotation_at` column. */
export interface StoredRotationPolicy {
  rotation_period: RotationPeriod | null;
  key_transition_period_ms: number;
  /** A secret reference each rotation writes the new key to (by id); absent or null: none. */
  secret_reference_id?: string | null;
  /** The key of a JSON secret to set (else the reference's own secret_key, else the whole secret). */
  secret_key?: string | null;
}

export const parseRotationPolicy = (json: string | null): StoredRotationPolicy | null =>
  json === null ? null : (JSON.parse(json) as StoredRotationPolicy);

/** One period after `from`: 7 days, or one calendar month (clamped to the month's last day, 31 Jan → 28/29 Feb). */
export function nextRotationAfter(from: number, period: RotationPeriod): number {
  if (period === 'weekly') return from + ROTATION_PERIOD_MS.weekly;
  const date = new Date(from);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth() + 1;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(
    year,
    month,
    Math.min(date.getUTCDate(), lastDay),
    date.getUTCHours(),
    date.getUTCMinutes(),
    date.getUTCSeconds(),
    date.getUTCMilliseconds(),
  );
}

/** The first scheduled time after `now`, counted from `dueAt`: periods missed while no worker ran are skipped, not replayed. */
export function nextRotationPast(dueAt: number, period: RotationPeriod, now: number): number {
  let next = nextRotationAfter(dueAt, period);
  while (next <= now) next = nextRotationAfter(next, period);
  return next;
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
 * another instance are seen; changes made here invalidate at once (and the instance bus
 * invalidates every other instance once the change commits).
 */
export function createApiKeyVerifier(deps: { repo: ApiKeyRepository; clock: Clock; ttlMs: number }) {
  const byHash = new Map<string, CacheEntry>();
  /**
   * Raw key → its SHA-256, for keys that verified (an unknown key is hashed every time, so
   * guessing fills nothing). Only the hash is remembered: every request still goes through the
   * cache entry, its TTL and its status checks, so a revoked or rotated key is refused as before.
   * The lookup by raw string is no secret-dependent comparison an attacker can steer: V8's string
   * hash is seeded per process, and the stored digest is still compared in constant time on load.
   */
  const hashes = new Map<string, string>();

  function hashOf(raw: string): string {
    return hashes.get(raw) ?? hashKey(raw);
  }

  function remember(raw: string, hash: string): void {
    if (hashes.has(raw)) return;
    // Oldest out first (a Map keeps insertion order): the bound holds under any number of keys.
    if (hashes.size >= MAX_MEMOISED_HASHES) hashes.delete(hashes.keys().next().value as string);
    hashes.set(raw, hash);
  }

  function forgetHashes(dropped: ReadonlySet<string> | null): void {
    if (dropped === null) return hashes.clear();
    for (const [raw, hash] of hashes) if (dropped.has(hash)) hashes.delete(raw);
  }
  /** Keys that live in this process only (the startup file's, see server/startup-admin.ts). */
  const inMemory = new Map<string, Principal>();
  // Bumped by every invalidation, so that a load that read the row before a change cannot cache it after.
  let generation = 0;

  /** Reads the row of a hash that has no fresh cache entry; undefined when no key has it. */
  async function load(hash: string): Promise<CacheEntry | undefined> {
    const startedAt = generation;
    const row = await deps.repo.findByAnyHashWithRoles(hash);
    // Both comparisons always run, in constant time; which one matched decides the rules below.
    const current = row !== undefined && digestsEqual(row.key_hash, hash);
    const previous = row !== undefined && row.previous_key_hash !== null && digestsEqual(row.previous_key_hash, hash);
    if (!row || (!current && !previous)) {
      byHash.delete(hash);
      return undefined;
    }
    const entry: CacheEntry = {
      row,
      accepted: Object.freeze({ ok: true as const, principal: toPrincipal(row) }),
      loadedAt: deps.clock.now(),
      previous: !current,
      expiresAt: epochMs(row.expires_at),
      previousExpiresAt: epochMs(row.previous_key_expires_at),
    };
    if (startedAt === generation) byHash.set(hash, entry);
    return entry;
  }

  /** The rules every request goes through, cached entry or not. */
  function judge(raw: string, hash: string, entry: CacheEntry, now: number): VerifyResult {
    const { row } = entry;
    if (row.status === 'revoked') return REFUSED.revoked;
    if (row.status === 'expired') return REFUSED.expired;
    if (entry.expiresAt !== null && entry.expiresAt <= now) return REFUSED.expired;
    if (entry.previous && (entry.previousExpiresAt === null || entry.previousExpiresAt <= now)) return REFUSED.rotated;
    // Archiving revokes nothing: the keys work again once the workspace is unarchived.
    if (row.workspace_status === 'archived') return REFUSED.workspace_archived;
    // Deactivation (SCIM active: false) suspends the user's keys; reactivation brings them back.
    if (row.user_deactivated_at) return REFUSED.user_deactivated;
    remember(raw, hash);
    return entry.accepted;
  }

  /**
   * The full outcome. A previous secret is accepted until `previous_key_expires_at` on the
   * injected clock; the time is checked on every call, so a cached entry never outlives it.
   * A key with a fresh cache entry is answered at once, not as a promise: the gateway's auth
   * hook then awaits nothing. Callers `await` the result either way.
   */
  function verify(raw: string): VerifyResult | Promise<VerifyResult> {
    if (!isWellFormedKey(raw)) return REFUSED.malformed;
    const hash = hashOf(raw);
    const held = inMemory.get(hash);
    if (held) return { ok: true, principal: held };
    const cached = byHash.get(hash);
    const now = deps.clock.now();
    if (cached && now - cached.loadedAt < deps.ttlMs) return judge(raw, hash, cached, now);
    return load(hash).then((entry) => (entry ? judge(raw, hash, entry, deps.clock.now()) : REFUSED.unknown));
  }

  return {
    verify,

    /** Forget a key after it changed (revoked, updated, rotated). */
    invalidate(keyId: string): void {
      generation += 1;
      const dropped = new Set<string>();
      for (const [hash, entry] of byHash)
        if (entry.row.id === keyId) {
          byHash.delete(hash);
          dropped.add(hash);
        }
      forgetHashes(dropped);
    },

    /**
     * Accepts `raw` as `principal` until the returned function is called: a key that is never
     * stored, for work the server does itself as someone (applying the startup file as the owner).
     */
    holdInMemory(raw: string, principal: Principal): () => void {
      const hash = hashKey(raw);
      inMemory.set(hash, principal);
      return () => void inMemory.delete(hash);
    },

    /** Forget every key, after a change that touches many (a user's role, a workspace). */
    invalidateAll(): void {
      generation += 1;
      byHash.clear();
      forgetHashes(null);
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
    ...(row.alert_emails ? { alertEmails: JSON.parse(row.alert_emails) as string[] } : {}),
    defaults: withWorkspaceMetadata(
      row.defaults === null ? null : (JSON.parse(row.defaults) as Principal['defaults']),
      row.workspace_defaults,
    ),
    workspaceAllowedModels: row.workspace_allowed_models
      ? (JSON.parse(row.workspace_allowed_models) as readonly string[])
      : null,
  });
}

/**
 * The workspace's default metadata (`defaults.metadata` of the workspace) goes under the key's own:
 * the key's fields win, and the request's own metadata wins over both (the gateway merges it on top).
 */
function withWorkspaceMetadata(
  defaults: Principal['defaults'],
  workspaceDefaults: string | null | undefined,
): Principal['defaults'] {
  const workspace = workspaceDefaults
    ? (JSON.parse(workspaceDefaults) as { metadata?: Record<string, string> }).metadata
    : undefined;
  if (!workspace || Object.keys(workspace).length === 0) return defaults;
  if (defaults === null) return { metadata: workspace, config_id: null, allow_config_override: true };
  return { ...defaults, metadata: { ...workspace, ...defaults.metadata } };
}
