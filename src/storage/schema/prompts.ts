/** A folder of prompts and partials in one workspace; each workspace has one default collection. */
export interface PromptCollectionsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  /** Unique among the organisation's active collections. */
  slug: string;
  name: string;
  parent_collection_id: string | null;
  is_default: number;
  status: 'active' | 'archived';
  created_at: string;
  last_updated_at: string;
}

/** A prompt template or a prompt partial; its content lives in `prompt_versions`. */
export interface PromptsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  collection_id: string;
  kind: 'prompt' | 'partial';
  /** Unique among the organisation's active prompts (or partials). */
  slug: string;
  name: string;
  status: 'active' | 'archived';
  /** The version used when none is named (the published one). */
  default_version_id: string;
  created_at: string;
  last_updated_at: string;
}

/** One saved content of a prompt or partial; only `label_id` ever changes. JSON fields are text. */
export interface PromptVersionsTable {
  id: string;
  prompt_id: string;
  version: number;
  string: string;
  parameters: string | null;
  model: string | null;
  virtual_key: string | null;
  config_id: string | null;
  functions: string | null;
  tools: string | null;
  tool_choice: string | null;
  template_metadata: string | null;
  is_raw_template: number;
  description: string | null;
  label_id: string | null;
  status: 'active' | 'archived';
  created_at: string;
  created_by_key_id: string | null;
}

/** A label for prompt versions: organisation-wide (`workspace_id` null) or of one workspace. */
export interface PromptLabelsTable {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  name: string;
  description: string | null;
  color_code: string | null;
  /** production, staging, development: in every organisation, fixed. */
  is_universal: number;
  status: 'active' | 'archived';
  created_at: string;
  last_updated_at: string;
}

/** The prompts tables, as `Database` (../schema.ts) joins them. */
export interface PromptsTables {
  prompt_collections: PromptCollectionsTable;
  prompts: PromptsTable;
  prompt_versions: PromptVersionsTable;
  prompt_labels: PromptLabelsTable;
}
