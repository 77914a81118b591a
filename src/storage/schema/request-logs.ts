import type { Generated } from 'kysely';

/** One gateway request, written in batches off the hot path. `cost` is null when unknown, never 0 for "unknown". */
export interface RequestLogsTable {
  seq: Generated<number>;
  id: string;
  trace_id: string;
  request_id: string;
  organisation_id: string;
  workspace_id: string;
  api_key_id: string;
  provider: string | null;
  credential_source: string | null;
  model: string | null;
  endpoint_type: string;
  method: string;
  path: string;
  status_code: number;
  is_success: number;
  is_stream: number;
  error_code: string | null;
  error_message: string | null;
  latency_ms: number;
  ttfb_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  total_tokens: number | null;
  cost: number | null;
  cost_currency: string;
  cache_status: string;
  /** A cache hit: what the provider call it replaced would have cost, US dollars (null: not a hit, or not priced). */
  cache_savings?: number | null;
  metadata: string | null;
  request_body: string | null;
  response_body: string | null;
  created_at: string;
  /** The config that routed the request (id), when one did. */
  config_id: string | null;
  /** JSON array of {target, provider, status, latency_ms, error_code?}: every upstream attempt. */
  attempts: string | null;
  retry_count: Generated<number>;
  span_id: string | null;
  parent_span_id: string | null;
  span_name: string | null;
  prompt_id: string | null;
  /** The model the client asked for; `model` is the one that answered (they differ after overrides or aliases). */
  requested_model: string | null;
  /** Seconds of audio, for transcriptions billed by duration. */
  audio_seconds: number | null;
  /** Every guardrail hook's results (JSON: before_request_hooks, after_request_hooks); null when none ran. */
  hook_results: string | null;
  /** passed, failed (let through, 246) or denied (446); null when no guardrail ran. */
  guardrail_verdict: string | null;
  /** The prompt version number and label name a prompt run used (prompt_id names the prompt). */
  prompt_version?: number | null;
  prompt_label?: string | null;
  /** An MCP tool call: the MCP server, the tool, and the sizes (bytes of JSON) of its arguments and result. */
  mcp_server_id?: string | null;
  mcp_tool?: string | null;
  /** Agent gateway calls (docs/agents.md): the agent server and the JSON-RPC method (request_bytes and response_bytes too). */
  agent_server_id?: string | null;
  rpc_method?: string | null;
  request_bytes?: number | null;
  response_bytes?: number | null;
}

/** The request logs tables, as `Database` (../schema.ts) joins them. */
export interface RequestLogsTables {
  request_logs: RequestLogsTable;
}
