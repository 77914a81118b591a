import type { UsageLimitPoliciesTable } from '../storage/schema.js';
import type { BudgetSource } from './budgets.js';
import { periodStart } from './periods.js';
import type { UsageLimits } from './schemas.js';

/** A usage-limits policy as a budget: it matches on its conditions and counts per group-by bucket. */
export function policyBudget(row: UsageLimitPoliciesTable): BudgetSource {
  return {
    scopeType: 'policy',
    scopeId: row.id,
    label: `usage limits policy ${row.name ? `"${row.name}" ` : ''}(${row.id})`,
    name: row.name ?? row.id,
    type: row.type,
    creditLimit: row.credit_limit,
    alertThreshold: row.alert_threshold,
    periodStart: periodStart(row),
    resetAt: row.next_usage_reset_at ? Date.parse(row.next_usage_reset_at) : null,
    workspaceId: row.workspace_id,
    conditions: JSON.parse(row.conditions) as BudgetSource['conditions'],
    groupBy: JSON.parse(row.group_by) as BudgetSource['groupBy'],
  };
}

/** The `usage_limits` of an API key, a workspace, a deployment or a credential: one budget over all its requests. */
export function ownBudget(
  scopeType: 'api_key' | 'workspace' | 'deployment' | 'provider' | 'virtual_key',
  scopeId: string,
  label: string,
  name: string,
  limits: UsageLimits & { last_reset_at?: string | null },
  createdAt: string,
  workspaceId: string | null,
): BudgetSource {
  return {
    scopeType,
    scopeId,
    label,
    name,
    type: limits.type,
    creditLimit: limits.credit_limit,
    alertThreshold: limits.alert_threshold ?? null,
    periodStart: limits.last_reset_at ?? createdAt,
    resetAt: limits.next_usage_reset_at ? Date.parse(limits.next_usage_reset_at) : null,
    workspaceId,
  };
}
