import type { RowCondition } from './row-conditions.js';

// The shapes of an analytics query, apart from the reader so that what plans a query
// (narrow-plan.ts) reads them without importing the reader.

/** Which requests a query counts: the caller's organisation, a time window (ms, both ends inclusive) and filters. */
export interface RowFilter {
  organisationId: string;
  from: number;
  to: number;
  workspaceId?: string | undefined;
  apiKeyId?: string | undefined;
  /** The API keys the caller may see (data visibility); null: every key. */
  visibleKeyIds: readonly string[] | null;
  provider?: string | undefined;
  model?: string | undefined;
  statusCodes?: readonly number[] | undefined;
  /** Only requests whose guardrails reached this verdict (passed, failed, denied). */
  guardrailVerdict?: string | undefined;
  /**
   * Pairs the request's metadata must hold: one pair of a summed key (analytics_metadata_keys),
   * or one pair of each key of a summed combination, is read from `analytics_metadata_rollups`;
   * any other filter reads request_logs.
   */
  metadata?: Readonly<Record<string, string>> | undefined;
  /** Conditions on single requests (the reference's cost, token, trace, … filters); such queries read request_logs. */
  rows?: readonly RowCondition[] | undefined;
}

/** The request-log columns analytics group by. */
export type GroupColumn =
  | 'provider'
  | 'model'
  | 'status_code'
  | 'api_key_id'
  | 'config_id'
  | 'workspace_id'
  | 'credential_source'
  | 'prompt_id'
  | 'guardrail_verdict';

export type Grouping = { by: 'all' } | { by: 'column'; column: GroupColumn } | { by: 'time'; interval: 'hour' | 'day' };
