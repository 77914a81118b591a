import type { RequestLogInsert } from '../../storage/repositories/request-logs.js';

/**
 * A request log record as the API shows it, from a stored row or one still queued; bodies only
 * on the single-record read.
 */
export function toLogObject(row: RequestLogInsert, withBodies: boolean) {
  return {
    id: row.id,
    trace_id: row.trace_id,
    request_id: row.request_id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    api_key_id: row.api_key_id,
    provider: row.provider ?? null,
    credential_source: row.credential_source ?? null,
    model: row.model ?? null,
    requested_model: row.requested_model ?? null,
    endpoint_type: row.endpoint_type,
    method: row.method,
    path: row.path,
    status_code: row.status_code,
    is_success: row.is_success === 1,
    stream: row.is_stream === 1,
    error_code: row.error_code ?? null,
    error_message: row.error_message ?? null,
    latency_ms: row.latency_ms,
    ttfb_ms: row.ttfb_ms ?? null,
    prompt_tokens: row.prompt_tokens ?? null,
    completion_tokens: row.completion_tokens ?? null,
    cached_tokens: row.cached_tokens ?? null,
    total_tokens: row.total_tokens ?? null,
    audio_seconds: row.audio_seconds ?? null,
    cost: row.cost ?? null,
    cost_currency: row.cost_currency,
    cache_status: row.cache_status,
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : null,
    config_id: row.config_id ?? null,
    /** The prompt a prompt run used, its version number and label (`POST /v1/prompts/{id}/completions`). */
    prompt_id: row.prompt_id ?? null,
    prompt_version: row.prompt_version ?? null,
    prompt_label: row.prompt_label ?? null,
    /** passed, failed (let through with 246) or denied (446); null when no guardrail ran. */
    guardrail_verdict: row.guardrail_verdict ?? null,
    /** Each guardrail hook's verdict with its checks and the time they took. */
    hook_results: row.hook_results ? (JSON.parse(row.hook_results) as unknown) : null,
    /** Every upstream attempt when a config routed the request: {target, provider, status, latency_ms, error_code?}. */
    attempts: row.attempts ? (JSON.parse(row.attempts) as unknown[]) : null,
    retry_count: row.retry_count ?? 0,
    /** An MCP tool call (endpoint_type mcp): the MCP server, the tool, the sizes of its arguments and result in bytes. */
    mcp_server_id: row.mcp_server_id ?? null,
    mcp_tool: row.mcp_tool ?? null,
    /** Agent gateway calls: the agent server, the JSON-RPC method (message/send, SendMessage, …), the body sizes in bytes. */
    agent_server_id: row.agent_server_id ?? null,
    rpc_method: row.rpc_method ?? null,
    request_bytes: row.request_bytes ?? null,
    response_bytes: row.response_bytes ?? null,
    span_id: row.span_id ?? null,
    parent_span_id: row.parent_span_id ?? null,
    span_name: row.span_name ?? null,
    created_at: row.created_at,
    ...(withBodies ? { request_body: row.request_body ?? null, response_body: row.response_body ?? null } : {}),
    object: 'log' as const,
  };
}
