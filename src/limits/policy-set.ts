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

/** Maps keyed by each fact the policies read, one level per fact; the last level holds the shapes. */
type ShapeLevel = Map<string | undefined, ShapeLevel | RequestShape>;

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
  // The facts a shape is told apart by, one map level each.
  const factsRead: Array<(facts: RequestFacts) => string | undefined> = [
    (facts) => facts.apiKeyId,
    (facts) => facts.workspaceId,
    (facts) => facts.workspaceSlug,
    (facts) => facts.endpointType,
    ...metadataFields.map((field) => (facts: RequestFacts) => facts.metadata?.[field]),
  ];
  const depth = factsRead.length;
  const factAt = (facts: RequestFacts, level: number) => factsRead[level]!(facts);
  // Nested maps rather than one map keyed by a joined string: finding a request's shape builds no string.
  const shapes: ShapeLevel = new Map();
  let count = 0;
  function shapeOf(facts: RequestFacts): RequestShape {
    let level = shapes;
    for (let i = 0; i < depth - 1; i++) {
      const fact = factAt(facts, i);
      let next = level.get(fact) as ShapeLevel | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(fact, next);
      }
      level = next;
    }
    const fact = factAt(facts, depth - 1);
    let shape = level.get(fact) as RequestShape | undefined;
    if (shape === undefined) {
      if (count >= MAX_SHAPES) {
        shapes.clear();
        count = 0;
        return shapeOf(facts);
      }
      shape = {};
      level.set(fact, shape);
      count += 1;
    }
    return shape;
  }
  return { rate, usage, shapeOf };
}

/** With policies switched off (POLICY_ENABLED=OFF): the limits of keys, workspaces and deployments are still remembered. */
export const NO_POLICIES: PolicySet = createPolicySet([], []);
