import type { Principal } from '../auth/principal.js';
import { applicableBudgets, type Budget, type BudgetSource } from './budgets.js';
import { ownBudget } from './budget-sources.js';
import type { WorkspaceInfo } from './limit-sources.js';
import type { RequestFacts } from './matching.js';
import type { PolicySet } from './policy-set.js';
import { applicableRateLimits, type AppliedRateLimit } from './rate-limiter.js';

/**
 * The rate limits that apply to a request: every matching policy, the key's, the workspace's and
 * the deployment's. Requests alike in what the policies read get the same list while its windows
 * last and nothing it was built from was replaced (those objects are replaced on every change).
 */
export function rateLimitsFor(
  policies: PolicySet,
  keyLimits: Principal['rateLimits'],
  facts: RequestFacts,
  workspace: WorkspaceInfo,
  now: number,
): AppliedRateLimit[] {
  const shape = policies.shapeOf(facts);
  const deployment = facts.deployment ?? null;
  const memo = shape.rate;
  if (
    memo &&
    memo.keyLimits === keyLimits &&
    memo.workspace === workspace.rateLimits &&
    memo.deployment === deployment &&
    memo.from <= now &&
    now < memo.until
  )
    return memo.applied;
  const applied = applicableRateLimits(policies.rate, keyLimits, facts, now, deployment, {
    id: facts.workspaceId,
    slug: facts.workspaceSlug,
    rateLimits: workspace.rateLimits,
  });
  // Every window holds `now`; they all still hold a later instant before the first of them ends.
  let until = Infinity;
  for (const limit of applied) if (limit.windowEnd < until) until = limit.windowEnd;
  shape.rate = { keyLimits, workspace: workspace.rateLimits, deployment, from: now, until, applied };
  return applied;
}

/** The budgets that cover a request: matching usage-limits policies, the key's, the workspace's and the deployment's. */
export function budgetsFor(
  policies: PolicySet,
  principal: Principal,
  facts: RequestFacts,
  workspace: WorkspaceInfo,
): Budget[] {
  const shape = policies.shapeOf(facts);
  const deployment = facts.deployment ?? null;
  const memo = shape.budgets;
  if (memo && memo.principal === principal && memo.workspace === workspace && memo.deployment === deployment)
    return memo.budgets;
  const sources: BudgetSource[] = [...policies.usage];
  if (principal.usageLimits)
    sources.push({
      ...ownBudget(
        'api_key',
        principal.keyId,
        'usage limit of the API key',
        principal.keyName,
        principal.usageLimits,
        principal.keyCreatedAt,
        facts.workspaceId,
      ),
      ...(principal.alertEmails ? { alsoTo: principal.alertEmails } : {}),
    });
  if (workspace.budget) sources.push(workspace.budget);
  // A deployment's budget alerts the organisation's administrators, not the request's workspace.
  if (deployment?.usageLimits)
    sources.push(
      ownBudget(
        'deployment',
        deployment.id,
        `usage limit of deployment ${deployment.slug}`,
        deployment.slug,
        deployment.usageLimits,
        deployment.createdAt,
        null,
      ),
    );
  const budgets = applicableBudgets(sources, facts);
  shape.budgets = { principal, workspace, deployment, budgets };
  return budgets;
}
