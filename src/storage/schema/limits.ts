export interface RateLimitPoliciesTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  name: string | null;
  conditions: string;
  group_by: string;
  type: 'requests' | 'tokens';
  unit: 'rpm' | 'rph' | 'rpd' | 'rpw';
  value: number;
  status: 'active' | 'archived';
  created_at: string;
  last_updated_at: string;
}

export interface UsageLimitPoliciesTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  name: string | null;
  conditions: string;
  group_by: string;
  type: 'cost' | 'tokens';
  credit_limit: number;
  alert_threshold: number | null;
  periodic_reset: 'weekly' | 'monthly' | null;
  periodic_reset_days: number | null;
  next_usage_reset_at: string | null;
  last_reset_at: string | null;
  status: 'active' | 'archived';
  created_at: string;
  last_updated_at: string;
}

/** Settled usage of one budget bucket in one period (`scope_type` policy | api_key | workspace). */
export interface UsageCountersTable {
  scope_type: string;
  scope_id: string;
  value_key: string;
  period_start: string;
  current_usage: number;
  last_updated_at: string;
}

export interface LimitCountersTable {
  key: string;
  count: number;
  expires_at: number;
}

/** The limits tables, as `Database` (../schema.ts) joins them. */
export interface LimitsTables {
  rate_limit_policies: RateLimitPoliciesTable;
  usage_limit_policies: UsageLimitPoliciesTable;
  usage_counters: UsageCountersTable;
  limit_counters: LimitCountersTable;
}
