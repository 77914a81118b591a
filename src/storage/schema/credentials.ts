export type CredentialStatus = 'active' | 'archived';

/**
 * An organisation's credential for one provider type. `encrypted_key` is a secret-box value
 * (never the raw key); `configurations` is JSON whose secret fields are sealed the same way.
 */
export interface IntegrationsTable {
  id: string;
  organisation_id: string;
  slug: string;
  name: string;
  ai_provider_id: string;
  description: string | null;
  encrypted_key: string | null;
  key_hint: string | null;
  configurations: string;
  tags: string;
  status: CredentialStatus;
  created_at: string;
  last_updated_at: string;
  last_reset_at: string | null;
  /** 1: every model not disabled in `integration_models` is allowed; 0: only those enabled there. */
  allow_all_models: number;
  /** 1: every workspace may use the integration, unless `integration_workspaces` disables it there; 0: only those it enables. */
  all_workspaces: number;
  /** JSON array of {target_field, secret_reference_id, secret_key, value_format}: fields read from a secret manager. */
  secret_mappings: string;
}

/** A workspace's own setting for an integration (`/v1/integrations/{slug}/workspaces`); wins over `all_workspaces`. */
export interface IntegrationWorkspacesTable {
  integration_id: string;
  workspace_id: string;
  organisation_id: string;
  enabled: number;
  created_at: string;
  last_updated_at: string;
}

/** One model entry of an integration's catalogue (`/v1/integrations/{slug}/models`). */
export interface IntegrationModelsTable {
  id: string;
  integration_id: string;
  /** The model name as the provider knows it (`gpt-4o-mini`). */
  slug: string;
  name: string | null;
  enabled: number;
  is_custom: number;
  is_finetune: number;
  base_model_slug: string | null;
  /** JSON pricing_config as given, or null. */
  pricing_config: string | null;
  created_at: string;
  last_updated_at: string;
}

/** `model: "<name>"` resolved to `@slug/model` or to a config, per workspace or organisation-wide. */
export interface ModelAliasesTable {
  id: string;
  organisation_id: string;
  /** Null for an organisation-wide alias. */
  workspace_id: string | null;
  /** The workspace id, or the organisation id for an organisation-wide alias: names are unique per scope. */
  scope_id: string;
  name: string;
  /** `@provider-slug/model`, or null when the alias names a config. */
  target_model: string | null;
  config_id: string | null;
  description: string | null;
  created_at: string;
  last_updated_at: string;
}

/** A workspace's handle on an integration: what `x-service-provider: @slug` names. */
export interface ProvidersTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  integration_id: string;
  slug: string;
  name: string;
  note: string | null;
  tags: string;
  status: CredentialStatus;
  created_at: string;
  last_updated_at: string;
  last_reset_at: string | null;
  /** JSON UsageLimits (with last_reset_at), or null. */
  usage_limits: string | null;
  /** JSON array of rate limits, or null. */
  rate_limits: string | null;
  /** After it, the gateway refuses the credential. */
  expires_at: string | null;
}

/** The legacy workspace credential (`x-service-virtual-key`): provider type and key in one. */
export interface VirtualKeysTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  slug: string;
  name: string;
  provider: string;
  encrypted_key: string | null;
  key_hint: string | null;
  note: string | null;
  configurations: string;
  status: CredentialStatus;
  created_at: string;
  last_updated_at: string;
  last_reset_at: string | null;
  /** JSON array of {target_field, secret_reference_id, secret_key, value_format}: fields read from a secret manager. */
  secret_mappings: string;
  /** JSON UsageLimits (with last_reset_at), or null. */
  usage_limits: string | null;
  /** JSON array of rate limits, or null. */
  rate_limits: string | null;
  /** After it, the gateway refuses the credential. */
  expires_at: string | null;
}

export type SecretManagerType = 'aws_sm' | 'azure_kv' | 'hashicorp_vault';

/**
 * Where a secret lives in an external secret manager and how to sign in to it. `auth_config`
 * is JSON whose secret fields are sealed with the master key; the secret itself is never stored.
 */
export interface SecretReferencesTable {
  id: string;
  organisation_id: string;
  slug: string;
  name: string;
  description: string | null;
  manager_type: SecretManagerType;
  auth_config: string;
  secret_path: string;
  secret_key: string | null;
  allow_all_workspaces: number;
  /** JSON array of workspace ids (used when allow_all_workspaces is 0). */
  allowed_workspaces: string;
  tags: string;
  status: CredentialStatus;
  /** The user who created it, when the key had one. */
  created_by: string | null;
  created_at: string;
  last_updated_at: string;
}

/** The credentials tables, as `Database` (../schema.ts) joins them. */
export interface CredentialsTables {
  integrations: IntegrationsTable;
  integration_workspaces: IntegrationWorkspacesTable;
  integration_models: IntegrationModelsTable;
  model_aliases: ModelAliasesTable;
  providers: ProvidersTable;
  virtual_keys: VirtualKeysTable;
  secret_references: SecretReferencesTable;
}
