/**
 * Tables of migrations 0013, 0034 and 0035 (analytics rollups), declared by module augmentation so that the
 * shared schema file stays untouched. Written only by the request-log repository's insertBatch.
 */
declare module '../../storage/schema.js' {
  interface Database {
    analytics_rollups: AnalyticsRollupsTable;
    analytics_key_rollups: AnalyticsKeyRollupsTable;
  }
}

/** Sums of the requests of one key and period; every column adds up (min/max for the last four). */
export interface RollupMeasures {
  requests: number;
  successes: number;
  /** cache_status HIT or SEMANTIC_HIT. */
  cache_hits: number;
  semantic_hits: number;
  /** US dollars; requests of unknown cost add nothing. */
  cost: number;
  total_tokens: number;
  /** Requests that reported total_tokens (the divisor of avg_tokens); the same for prompt and completion. */
  token_rows: number;
  prompt_tokens: number;
  prompt_rows: number;
  completion_tokens: number;
  completion_rows: number;
  latency_sum: number;
  latency_min: number;
  latency_max: number;
  /** Latency histogram: (uint16 bucket, uint32 count) pairs, little-endian; see request-logs.ts. */
  latency_hist: Uint8Array;
  /** Earliest and latest created_at (ISO 8601). */
  first_seen: string;
  last_seen: string;
}

interface RollupPeriodKey {
  organisation_id: string;
  /** 1 (hour), 24 (UTC day), 168 (week from Monday 00:00 UTC) or 672 (four weeks, counted from Monday 1970-01-05). */
  period: number;
  /** Hours since 1970-01-01T00:00Z of the period's first hour. */
  period_start: number;
}

/** Per every dimension analytics group or filter by; NULL of request_logs is ''. */
export interface AnalyticsRollupsTable extends RollupPeriodKey, RollupMeasures {
  workspace_id: string;
  api_key_id: string;
  provider: string;
  credential_source: string;
  model: string;
  config_id: string;
  prompt_id: string;
  status_code: number;
}

/** Per workspace and API key only: what unfiltered summaries and graphs read (far fewer rows). */
export interface AnalyticsKeyRollupsTable extends RollupPeriodKey, RollupMeasures {
  workspace_id: string;
  api_key_id: string;
}

declare module '../../storage/schema.js' {
  interface Database {
    analytics_metadata_keys: AnalyticsMetadataKeysTable;
    analytics_metadata_rollups: AnalyticsMetadataRollupsTable;
  }
}

/** The metadata keys the request-log writer sums (migration 0034, synced from the setting at start). */
export interface AnalyticsMetadataKeysTable {
  metadata_key: string;
  /** The first hour (hours since the epoch) from which the key's rollups hold every request. */
  since_hour: number;
}

/** Per metadata key and value of a summed key and every dimension of `analytics_rollups`. */
export interface AnalyticsMetadataRollupsTable extends AnalyticsRollupsTable {
  metadata_key: string;
  metadata_value: string;
}

declare module '../../storage/schema.js' {
  interface Database {
    analytics_narrow_rollups: AnalyticsNarrowRollupsTable;
    /** One row: the first hour from which the narrow rollups are whole (moved back by the backfill). */
    analytics_narrow_since: { id: number; since_hour: number };
  }
}

/**
 * Per workspace and one dimension's value (migration 0035), with or without a summed metadata
 * pair ('' and '': without); dimension '' (with a pair only): per workspace alone.
 */
export interface AnalyticsNarrowRollupsTable extends RollupPeriodKey, RollupMeasures {
  metadata_key: string;
  metadata_value: string;
  dimension: string;
  /** The dimension's value as text: a status code in decimal, '' for NULL. */
  value: string;
  workspace_id: string;
}
