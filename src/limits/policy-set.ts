import type { RateLimitPolicyRow } from '../storage/repositories/rate-limit-policies.js';
import type { UsageLimitPoliciesTable } from '../storage/schema.js';
import type { Budget, BudgetSource } from './budgets.js';
import { policyBudget } from './budget-sources.js';
import type { Condition, RequestFacts } from './matching.js';
import type { AppliedRateLimit, ParsedRatePolicy } from './rate-limiter.js';

/** Kinds of request remembered per policy set; past this the memo starts over (metadata can vary without bound). */
const MAX_SHAPES = 1024;

/** What the limits made of one kind of request last time, with what it was built from (compared by identity). */
export interface RequestShape {
  rate?: {
    keyLimits: unknown;
    workspace: unknown;
    deployment: unknown;
    /** The windows it was built in: valid while `from <= now < until`. */
    from: number;
    until: number;
    applied: AppliedRateLimit[];
  };
  budgets?: { principal: unknown; workspace: unknown; deployment: unknown; budgets: Budget[] };
}

/**
 * The active policies of an organisation as loaded. The object is replaced whenever the policies
 * may have changed (the cache's TTL, or `invalidate` from the admin API and the change bus), so
 * what was matched for a kind of request is remembered on it: the "version" is its identity.
 */
export interface PolicySet {
  readonly rate: readonly ParsedRatePolicy[];
  readonly usage: readonly BudgetSource[];
  /** The memo of requests alike in everything the policies read (key, workspace, endpoint, metadata they name). */
  shapeOf(facts: RequestFacts): RequestShape;
}

const part = (value: string | undefined): string => (value === undefined ? '-' : `${value.length}:${value}`);

export function createPolicySet(rateRows: RateLimitPolicyRow[], usageRows: UsageLimitPoliciesTable[]): PolicySet {
  const rate = rateRows.map((row) => ({
    row,
    conditions: JSON.parse(row.conditions) as Condition[],
    groupBy: JSON.parse(row.group_by) as Array<{ key: string }>,
  }));
  const usage = usageRows.map(policyBudget);
  // Only the metadata fields some policy matches or groups on tell requests apart.
  const fields = new Set<string>();
  for (const policy of [...rate, ...usage])
    for (const { key } of [...(policy.conditions ?? []), ...(policy.groupBy ?? [])])
      if (key.startsWith('metadata.')) fields.add(key.slice('metadata.'.length));
  const metadataFields = [...fields];
  const shapes = new Map<string, RequestShape>();
  return {
    rate,
    usage,
    shapeOf(facts) {
      let key = `${part(facts.apiKeyId)}${part(facts.workspaceId)}${part(facts.workspaceSlug)}${part(facts.endpointType)}`;
      for (const field of metadataFields) key += part(facts.metadata?.[field]);
      let shape = shapes.get(key);
      if (!shape) {
        if (shapes.size >= MAX_SHAPES) shapes.clear();
        shape = {};
        shapes.set(key, shape);
      }
      return shape;
    },
  };
}

/** With policies switched off (POLICY_ENABLED=OFF): the limits of keys, workspaces and deployments are still remembered. */
export const NO_POLICIES: PolicySet = createPolicySet([], []);
