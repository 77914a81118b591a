import type { Principal } from '../auth/principal.js';
import { isoAt } from '../lib/clock.js';
import { newTimeOrderedId } from '../lib/ids.js';
import type { RequestLogInsert } from '../storage/repositories/request-logs.js';
import { plausibleUsage, type TokenUsage } from '../providers/usage.js';
import type { PromptUse } from './exchange.js';

/**
 * The request log record as the pipeline learns it, step by step; `finish` turns it into the
 * row the batched writer stores. Fields a request never reached (no provider, no usage) stay null.
 */
export class RequestLogDraft {
  readonly id = newTimeOrderedId();
  traceId: string | null = null;
  provider: string | null = null;
  credentialSource: string | null = null;
  /** The model that answered (the provider's own word when it gave one), else the one sent. */
  model: string | null = null;
  /** The model the client asked for, before overrides. */
  requestedModel: string | null = null;
  isStream = false;
  ttfbMs: number | null = null;
  private reportedUsage: TokenUsage | null = null;
  cost: number | null = null;
  metadata: Record<string, string> | null = null;
  errorCode: string | null = null;
  errorMessage: string | null = null;
  requestBody: string | null = null;
  responseBody: string | null = null;
  configId: string | null = null;
  /** Every upstream attempt, when a config routed the request (JSON text). */
  attempts: string | null = null;
  retryCount = 0;
  spanId: string | null = null;
  parentSpanId: string | null = null;
  spanName: string | null = null;
  cacheStatus = 'DISABLED';
  /** A cache hit: the provider call the cached answer replaced (its usage as the answer reports it), to be priced. */
  replacedCall: { provider: string | null; model: string | null; usage: TokenUsage | null } | null = null;
  /** What that call would have cost, US dollars; null when not a hit or not priced. */
  cacheSavings: number | null = null;
  /** Guardrail hook results (JSON text) and the request's verdict, when a guardrail ran. */
  hookResults: string | null = null;
  guardrailVerdict: 'passed' | 'failed' | 'denied' | null = null;
  /** The prompt a prompt run used (its id, version number and label). */
  prompt: Pick<PromptUse, 'id' | 'version' | 'label'> | null = null;
  /** An MCP tool call: the server, the tool, and the sizes (bytes of JSON) of its arguments and result. */
  mcpServerId: string | null = null;
  mcpTool: string | null = null;
  /** Agent gateway calls (docs/agents.md): the agent server, the JSON-RPC method, and the body sizes. */
  agentServerId: string | null = null;
  rpcMethod: string | null = null;
  requestBytes: number | null = null;
  responseBytes: number | null = null;

  constructor(
    readonly principal: Principal,
    readonly workspaceId: string,
    readonly endpointType: string,
    readonly method: string,
    readonly path: string,
    readonly requestId: string,
    readonly startedAt: number,
    readonly startedPerf: number,
  ) {}

  markFirstByte(now: number): void {
    this.ttfbMs ??= now - this.startedPerf;
  }

  /** The provider's token counts, those no request can have read as not reported (`plausibleUsage`): they price and count nothing. */
  get usage(): TokenUsage | null {
    return this.reportedUsage;
  }

  set usage(value: TokenUsage | null) {
    this.reportedUsage = value === null ? null : plausibleUsage(value);
  }

  finish(statusCode: number, endedPerf: number): RequestLogInsert {
    const usage = this.usage;
    return {
      id: this.id,
      trace_id: this.traceId ?? this.requestId,
      request_id: this.requestId,
      organisation_id: this.principal.organisationId,
      workspace_id: this.workspaceId,
      api_key_id: this.principal.keyId,
      provider: this.provider,
      credential_source: this.credentialSource,
      model: this.model,
      endpoint_type: this.endpointType,
      method: this.method,
      path: this.path,
      status_code: statusCode,
      is_success: statusCode >= 200 && statusCode < 400 && this.errorCode === null ? 1 : 0,
      is_stream: this.isStream ? 1 : 0,
      error_code: this.errorCode,
      error_message: this.errorMessage,
      latency_ms: round(endedPerf - this.startedPerf),
      ttfb_ms: this.ttfbMs === null ? null : round(this.ttfbMs),
      prompt_tokens: usage?.promptTokens ?? null,
      completion_tokens: usage?.completionTokens ?? null,
      cached_tokens: usage?.cachedTokens ?? null,
      total_tokens: usage?.totalTokens ?? null,
      cost: this.cost,
      cost_currency: 'USD',
      cache_status: this.cacheStatus,
      cache_savings: this.cacheSavings,
      metadata: this.metadata ? JSON.stringify(this.metadata) : null,
      request_body: this.requestBody,
      response_body: this.responseBody,
      created_at: isoAt(this.startedAt),
      config_id: this.configId,
      attempts: this.attempts,
      retry_count: this.retryCount,
      span_id: this.spanId,
      parent_span_id: this.parentSpanId,
      span_name: this.spanName,
      prompt_id: this.prompt?.id ?? null,
      prompt_version: this.prompt?.version ?? null,
      prompt_label: this.prompt?.label ?? null,
      requested_model: this.requestedModel,
      audio_seconds: usage?.audioSeconds ?? null,
      hook_results: this.hookResults,
      guardrail_verdict: this.guardrailVerdict,
      mcp_server_id: this.mcpServerId,
      mcp_tool: this.mcpTool,
      agent_server_id: this.agentServerId,
      rpc_method: this.rpcMethod,
      request_bytes: this.requestBytes,
      response_bytes: this.responseBytes,
    };
  }
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
