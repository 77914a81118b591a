import { andThen, type MaybePromise } from '../lib/maybe-promise.js';
import type { RateLimitPolicyRow } from '../storage/repositories/rate-limit-policies.js';
import type { CounterCheck, CounterStore } from './counter-store.js';
import { credentialLabel, type CredentialLimits } from './credential-limits.js';
import type { DeploymentLimits } from './deployment-limits.js';
import { bucketOf, matchesAll, type Condition, type RequestFacts } from './matching.js';
import type { RateLimitEntry } from './schemas.js';
import { windowAt } from './windows.js';

/** One limit that applies to a request, with the counter of its bucket in the current window. */
export interface AppliedRateLimit {
  /** Says which limit it is in a 429: the policy's name and id, or the API key's own limit. */
  label: string;
  policyId: string | null;
  type: 'requests' | 'tokens';
  value: number;
  key: string;
  windowEnd: number;
}

export type RateDecision =
  | { allowed: true; tokenLimits: AppliedRateLimit[]; headers: RateHeaders | null }
  | { allowed: false; limit: AppliedRateLimit; headers: RateHeaders };

export interface RateHeaders {
  limit: number;
  remaining: number;
  resetAt: number;
}

export interface ParsedRatePolicy {
  row: RateLimitPolicyRow;
  conditions: Condition[];
  groupBy: Array<{ key: string }>;
}

/** A workspace's own rate limits: all its keys' gateway traffic counts against them together. */
export interface WorkspaceRateLimits {
  id: string;
  slug: string;
  rateLimits: readonly RateLimitEntry[];
}

/** The limits that apply: every active policy whose conditions match, the key's own, the workspace's and the deployment's. */
export function applicableRateLimits(
  policies: readonly ParsedRatePolicy[],
  keyLimits: readonly RateLimitEntry[] | null,
  facts: RequestFacts,
  now: number,
  deployment: Pick<DeploymentLimits, 'id' | 'slug' | 'rateLimits'> | null = null,
  workspace: WorkspaceRateLimits | null = null,
): AppliedRateLimit[] {
  const applied: AppliedRateLimit[] = [];
  for (const policy of policies) {
    if (!matchesAll(policy.conditions, facts)) continue;
    const { row } = policy;
    const window = windowAt(row.unit, now);
    applied.push({
      label: `rate limits policy ${row.name ? `"${row.name}" ` : ''}(${row.id})`,
      policyId: row.id,
      type: row.type,
      value: row.value,
      key: `rl:p:${row.id}:${bucketOf(policy.groupBy, facts)}:${window.start}`,
      windowEnd: window.end,
    });
  }
  (keyLimits ?? []).forEach((limit, index) => {
    const window = windowAt(limit.unit, now);
    applied.push({
      label: `rate limit ${limit.value} ${limit.type} per ${limit.unit} of the API key`,
      policyId: null,
      type: limit.type,
      value: limit.value,
      key: `rl:k:${facts.apiKeyId}:${index}:${limit.unit}:${window.start}`,
      windowEnd: window.end,
    });
  });
  (workspace?.rateLimits ?? []).forEach((limit, index) => {
    const window = windowAt(limit.unit, now);
    applied.push({
      label: `rate limit ${limit.value} ${limit.type} per ${limit.unit} of workspace ${workspace!.slug}`,
      policyId: null,
      type: limit.type,
      value: limit.value,
      key: `rl:w:${workspace!.id}:${index}:${limit.unit}:${window.start}`,
      windowEnd: window.end,
    });
  });
  (deployment?.rateLimits ?? []).forEach((limit, index) => {
    const window = windowAt(limit.unit, now);
    applied.push({
      label: `rate limit ${limit.value} ${limit.type} per ${limit.unit} of deployment ${deployment!.slug}`,
      policyId: null,
      type: limit.type,
      value: limit.value,
      key: `rl:d:${deployment!.id}:${index}:${limit.unit}:${window.start}`,
      windowEnd: window.end,
    });
  });
  return applied;
}

/** The rate limits of the provider or virtual key a request is sent with: counted per credential. */
export function credentialRateLimits(
  credential: Pick<CredentialLimits, 'kind' | 'id' | 'slug' | 'rateLimits'>,
  now: number,
): AppliedRateLimit[] {
  return (credential.rateLimits ?? []).map((limit, index) => {
    const window = windowAt(limit.unit, now);
    return {
      label: `rate limit ${limit.value} ${limit.type} per ${limit.unit} of the ${credentialLabel(credential)}`,
      policyId: null,
      type: limit.type,
      value: limit.value,
      key: `rl:c:${credential.id}:${index}:${limit.unit}:${window.start}`,
      windowEnd: window.end,
    };
  });
}

/**
 * Request limits are checked and counted in one atomic step across all of them, so that N
 * concurrent requests against a limit of k let exactly k through. Token limits admit a request
 * while tokens remain; its real usage is added when the response ends (`settleTokens`).
 */
export function checkRateLimits(
  store: CounterStore,
  applied: AppliedRateLimit[],
  now: number,
): MaybePromise<RateDecision> {
  if (applied.length === 0) return { allowed: true, tokenLimits: [], headers: null };
  const split = splitOf(applied);
  if (split.tokenLimits.length === 0) return countRequests(store, split, NO_COUNTS, now);
  return andThen(store.peek(split.tokenKeys, now), (tokenCounts) => {
    const { tokenLimits } = split;
    for (let i = 0; i < tokenLimits.length; i++) {
      const limit = tokenLimits[i]!;
      if (tokenCounts[i]! >= limit.value) return refusedBy(limit);
    }
    return countRequests(store, split, tokenCounts, now);
  });
}

const NO_COUNTS: readonly number[] = [];

/** The decision for a request a limit has no room for: its headers say none is left until the window ends. */
const refusedBy = (limit: AppliedRateLimit): RateDecision => ({
  allowed: false,
  limit,
  headers: { limit: limit.value, remaining: 0, resetAt: limit.windowEnd },
});

/** Counts the request against its request limits, once its token limits have room. */
function countRequests(
  store: CounterStore,
  split: SplitLimits,
  tokenCounts: readonly number[],
  now: number,
): MaybePromise<RateDecision> {
  const { requestLimits, tokenLimits } = split;
  return andThen(store.consume(split.requestChecks, now), (result): RateDecision => {
    if (!result.allowed) {
      return refusedBy(requestLimits[result.index]!);
    }
    // The headers describe the tightest limit: the one with the fewest requests (or tokens) left (the first, on a tie).
    let tightest = requestLimits[0] ?? tokenLimits[0]!;
    let least = Infinity;
    for (let i = 0; i < requestLimits.length; i++) {
      const left = requestLimits[i]!.value - result.counts[i]!;
      if (left < least) {
        tightest = requestLimits[i]!;
        least = left;
      }
    }
    for (let i = 0; i < tokenLimits.length; i++) {
      const left = tokenLimits[i]!.value - tokenCounts[i]!;
      if (left < least) {
        tightest = tokenLimits[i]!;
        least = left;
      }
    }
    return {
      allowed: true,
      tokenLimits,
      headers: { limit: tightest.value, remaining: Math.max(0, least), resetAt: tightest.windowEnd },
    };
  });
}

/** A list of applied limits split by type, with what the store is asked: read only, never changed. */
interface SplitLimits {
  requestLimits: AppliedRateLimit[];
  tokenLimits: AppliedRateLimit[];
  tokenKeys: string[];
  requestChecks: CounterCheck[];
}
// The lists are remembered per request shape (request-limits.ts): split once per list, not per request.
const splits = new WeakMap<AppliedRateLimit[], SplitLimits>();
function splitOf(applied: AppliedRateLimit[]): SplitLimits {
  let split = splits.get(applied);
  if (split === undefined) {
    const requestLimits = applied.filter((limit) => limit.type === 'requests');
    const tokenLimits = applied.filter((limit) => limit.type !== 'requests');
    split = {
      requestLimits,
      tokenLimits,
      tokenKeys: tokenLimits.map((limit) => limit.key),
      requestChecks: requestLimits.map((limit) => ({
        key: limit.key,
        limit: limit.value,
        amount: 1,
        expiresAt: limit.windowEnd,
      })),
    };
    splits.set(applied, split);
  }
  return split;
}

/** Counts the tokens a request really used against every token limit it was admitted by. */
export function settleTokens(
  store: CounterStore,
  tokenLimits: AppliedRateLimit[],
  tokens: number,
  now: number,
): MaybePromise<void> {
  if (tokenLimits.length === 0 || tokens <= 0) return;
  return store.add(
    tokenLimits.map((limit) => ({ key: limit.key, amount: tokens, expiresAt: limit.windowEnd })),
    now,
  );
}
