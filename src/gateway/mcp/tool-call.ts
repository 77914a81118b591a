import { performance } from 'node:perf_hooks';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import type { McpServerView } from '../../mcp/directory.js';
import { McpUpstreamError } from '../../mcp/upstream-session.js';
import type { RequestLogWriter } from '../../telemetry/request-log-writer.js';
import type { GatewayHeaders } from '../gateway-headers.js';
import { deniedBody } from '../guardrails/hook-results.js';
import type { GatewayGuardrails } from '../guardrails/request-guard.js';
import { GuardrailRun, headerRecord, unavailableGuardrails } from '../guardrails/request-guardrails.js';
import { RequestLogDraft } from '../request-log-draft.js';

/** JSON-RPC error code of a tool call a guardrail denied (a server error code of svcgw's own; docs/mcp.md). */
export const GUARDRAIL_DENIED_CODE = -32046;

/** Who calls, through which HTTP request: what every tool call's record names. */
export interface CallContext {
  principal: Principal;
  view: McpServerView;
  requestId: string;
  path: string;
  headers: GatewayHeaders;
  rawHeaders: Readonly<Record<string, string | string[] | undefined>>;
}

export interface ToolCallDeps {
  clock: Clock;
  logs: RequestLogWriter;
  guardrails: GatewayGuardrails | null;
  /** Bytes of each body the log keeps (0: none). */
  capture: number;
}

const byteLength = (value: unknown): number => Buffer.byteLength(JSON.stringify(value ?? null));
const captured = (value: unknown, capture: number): string | null =>
  capture > 0
    ? Buffer.from(JSON.stringify(value ?? null))
        .subarray(0, capture)
        .toString('utf8')
    : null;

/** A refusal: the JSON-RPC error the client gets, and the status and code its log record carries. */
class Refusal extends Error {
  constructor(
    readonly error: McpError,
    readonly status: number,
    readonly code: string,
  ) {
    super(error.message);
  }
}

const CALLER_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.InvalidParams,
  ErrorCode.InvalidRequest,
  ErrorCode.MethodNotFound,
]);

/** An upstream failure as the client sees it and as the log records it. */
function upstreamRefusal(error: unknown, server: string): Refusal {
  if (error instanceof Refusal) return error;
  if (error instanceof McpError) {
    if (error.code === Number(ErrorCode.RequestTimeout)) return new Refusal(error, 504, 'UPSTREAM_TIMEOUT');
    // The server refused the call itself (an unknown tool, arguments its schema rejects).
    if (CALLER_ERRORS.has(error.code)) return new Refusal(error, 400, 'INVALID_REQUEST');
    return new Refusal(error, 502, 'UPSTREAM_ERROR');
  }
  const message = error instanceof McpUpstreamError ? error.message : `The MCP server ${server} could not be reached.`;
  return new Refusal(new McpError(ErrorCode.InternalError, message), 502, 'UPSTREAM_UNREACHABLE');
}

/**
 * One `tools/call` through the gateway: refused when the tool is disabled (as if it did not
 * exist), the server's input guardrails on the arguments, the upstream call, the output
 * guardrails on the result, and one request log record (endpoint type `mcp`) whatever happens.
 */
export async function runToolCall(
  deps: ToolCallDeps,
  context: CallContext,
  params: { name: string; arguments?: Record<string, unknown> | undefined },
  signal: AbortSignal,
  callUpstream: (params: { name: string; arguments?: Record<string, unknown> | undefined }) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const { principal, view } = context;
  const draft = new RequestLogDraft(
    principal,
    view.server.workspace_id,
    'mcp',
    'POST',
    context.path,
    context.requestId,
    deps.clock.now(),
    performance.now(),
  );
  draft.traceId = context.headers.traceId;
  draft.spanId = context.headers.spanId;
  draft.parentSpanId = context.headers.parentSpanId;
  draft.spanName = context.headers.spanName;
  const keyMetadata = principal.defaults?.metadata;
  draft.metadata =
    keyMetadata && Object.keys(keyMetadata).length > 0
      ? { ...keyMetadata, ...context.headers.metadata }
      : context.headers.metadata;
  draft.mcpServerId = view.server.id;
  draft.mcpTool = params.name;
  draft.requestBytes = byteLength(params.arguments ?? {});
  draft.requestBody = captured(params, deps.capture);
  deps.logs.started({
    id: draft.id,
    organisation_id: principal.organisationId,
    workspace_id: view.server.workspace_id,
    api_key_id: principal.keyId,
    endpoint_type: 'mcp',
    method: 'POST',
    path: context.path,
    model: null,
    created_at: new Date(draft.startedAt).toISOString(),
  });

  let status = 200;
  let guard: Awaited<ReturnType<typeof guardrailsOf>> = null;
  try {
    if (view.disabled('tool', params.name))
      throw new Refusal(new McpError(ErrorCode.InvalidParams, `Tool ${params.name} not found`), 404, 'NOT_FOUND');
    guard = await guardrailsOf(deps, context, signal);
    let sent = params;
    if (guard) {
      const pass = await guard.run.run('beforeRequestHook', guard.before, { request: params });
      if (pass.denied) throw denial(guard.run);
      sent = pass.request as typeof params;
      if (pass.changed) draft.requestBody = captured(sent, deps.capture);
    }
    let result: CallToolResult;
    try {
      result = await callUpstream(sent);
    } catch (error) {
      throw upstreamRefusal(error, view.server.slug);
    }
    if (guard) {
      const pass = await guard.run.run('afterRequestHook', guard.after, {
        request: sent,
        response: { json: result, status: 200 },
      });
      if (pass.denied) throw denial(guard.run);
      if (pass.response !== undefined) result = pass.response as CallToolResult;
    }
    draft.responseBytes = byteLength(result);
    draft.responseBody = captured(result, deps.capture);
    if (result.isError === true) {
      draft.errorCode = 'MCP_TOOL_ERROR';
      draft.errorMessage = toolErrorText(result);
    }
    return result;
  } catch (error) {
    const refusal = signal.aborted
      ? new Refusal(
          new McpError(ErrorCode.RequestTimeout, 'The client cancelled the call.'),
          499,
          'CLIENT_CLOSED_REQUEST',
        )
      : upstreamRefusal(error, view.server.slug);
    status = refusal.status;
    draft.errorCode = refusal.code;
    draft.errorMessage = refusal.error.message.slice(0, 2000);
    throw refusal.error;
  } finally {
    const endedPerf = performance.now();
    const guardrails = guard?.run ?? null;
    deps.logs.enqueueWhenReady(
      (async () => {
        if (guardrails?.ran) {
          const settled = await guardrails.settled();
          draft.hookResults = JSON.stringify(settled.results);
          draft.guardrailVerdict = settled.verdict;
        }
        return draft.finish(status, endedPerf);
      })(),
    );
  }
}

/** The text of a failed tool result, for the log's error message. */
function toolErrorText(result: CallToolResult): string {
  const text = result.content
    .filter((item): item is { type: 'text'; text: string } => item.type === 'text')
    .map((item) => item.text)
    .join('\n');
  return (text || 'The tool reported an error.').slice(0, 2000);
}

function denial(run: GuardrailRun): Refusal {
  const results = run.visible();
  const body = deniedBody(results);
  return new Refusal(
    new McpError(GUARDRAIL_DENIED_CODE, body.error.message, { hook_results: results }),
    446,
    'HOOKS_DENIED',
  );
}

/** The server's input and output guardrails, ready to run; null when it names none. */
async function guardrailsOf(deps: ToolCallDeps, context: CallContext, signal: AbortSignal) {
  const { server } = context.view;
  if (!deps.guardrails || (server.input_guardrails === null && server.output_guardrails === null)) return null;
  const node = {
    ...(server.input_guardrails ? { input_guardrails: JSON.parse(server.input_guardrails) as unknown[] } : {}),
    ...(server.output_guardrails ? { output_guardrails: JSON.parse(server.output_guardrails) as unknown[] } : {}),
  };
  const found = await deps.guardrails.lookup.forRequest({
    organisationId: server.organisation_id,
    workspaceId: server.workspace_id,
    node,
    withWorkspaceDefaults: false,
  });
  if (found.missing.length > 0) {
    const error = unavailableGuardrails(found.missing);
    throw new Refusal(new McpError(ErrorCode.InternalError, error.message), 400, error.code);
  }
  if (found.before.length === 0 && found.after.length === 0) return null;
  const guardrails = deps.guardrails;
  const run = new GuardrailRun(
    {
      clock: guardrails.clock,
      server: guardrails.server,
      recordFeedback: (feedback) =>
        guardrails.recordFeedback({
          ...feedback,
          organisationId: server.organisation_id,
          workspaceId: server.workspace_id,
          apiKeyId: context.principal.keyId,
        }),
    },
    {
      endpoint: 'mcp',
      headers: headerRecord(context.rawHeaders),
      metadata: context.headers.metadata ?? {},
      model: undefined,
      traceId: context.headers.traceId,
      signal,
    },
  );
  return { run, before: found.before, after: found.after };
}
