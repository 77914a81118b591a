export type DeploymentType = 'production' | 'non-production';

/** A named group of gateway instances (docs/deployments.md). */
export interface DeploymentsTable {
  id: string;
  organisation_id: string;
  slug: string;
  name: string;
  description: string | null;
  type: DeploymentType;
  status: 'active' | 'archived';
  /** The config (id) its instances apply to requests that name none; null: none. */
  config_id: string | null;
  /** JSON array of {type, unit, value}, or null. */
  rate_limits: string | null;
  /** JSON UsageLimits object (with `last_reset_at`), or null. */
  usage_limits: string | null;
  /** JSON array of the workspace ids its instances serve; null: every workspace. */
  allowed_workspaces: string | null;
  created_at: string;
  last_updated_at: string;
}

/** `active` while it heartbeats (shown `gone` once silent), `stopped` after a clean shutdown, `refused` at registration. */
export type DeploymentInstanceStatus = 'active' | 'stopped' | 'refused';

export interface DeploymentInstancesTable {
  id: string;
  deployment_id: string;
  organisation_id: string;
  status: DeploymentInstanceStatus;
  /** The svcgw version the instance reported. */
  version: string;
  /** The lowest gateway version this instance, as a control plane, lets register. */
  min_gateway_version: string;
  /** Where the instance listens (its advertised URL); null when it was refused before listening. */
  address: string | null;
  hostname: string;
  pid: number;
  heartbeat_interval_ms: number;
  started_at: string;
  last_heartbeat_at: string;
  stopped_at: string | null;
  refusal_reason: string | null;
}

/** The deployments tables, as `Database` (../schema.ts) joins them. */
export interface DeploymentsTables {
  deployments: DeploymentsTable;
  deployment_instances: DeploymentInstancesTable;
}
