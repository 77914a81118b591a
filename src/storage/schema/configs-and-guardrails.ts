/** A gateway config; its body lives in `config_versions`, and `latest_version_id` is the one in use. */
export interface ConfigsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  /** Unique among the organisation's active configs. */
  slug: string;
  name: string;
  status: 'active' | 'archived';
  latest_version_id: string;
  created_at: string;
  last_updated_at: string;
}

/** One saved body of a config (JSON text); versions count from 1 and are never changed. */
export interface ConfigVersionsTable {
  id: string;
  config_id: string;
  version: number;
  config: string;
  created_at: string;
  created_by_key_id: string | null;
}

/** A guardrail; `workspace_id` null means organisation-owned. Its checks live in `guardrail_versions`. */
export interface GuardrailsTable {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  /** Unique among the organisation's active guardrails. */
  slug: string;
  name: string;
  status: 'active' | 'archived';
  latest_version_id: string;
  /** The user who made it (or the key, when the key has no user). */
  owner_id: string;
  updated_by: string | null;
  created_at: string;
  last_updated_at: string;
}

/** One saved state of a guardrail: `checks` and `actions` are JSON text; never changed once written. */
export interface GuardrailVersionsTable {
  id: string;
  guardrail_id: string;
  version: number;
  name: string;
  checks: string;
  actions: string;
  created_at: string;
  created_by_key_id: string | null;
}

/** The configs and guardrails tables, as `Database` (../schema.ts) joins them. */
export interface ConfigsAndGuardrailsTables {
  configs: ConfigsTable;
  config_versions: ConfigVersionsTable;
  guardrails: GuardrailsTable;
  guardrail_versions: GuardrailVersionsTable;
}
