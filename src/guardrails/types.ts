import type { EndpointType } from '../providers/endpoints.js';

export type GuardrailHook = 'beforeRequestHook' | 'afterRequestHook';
export const GUARDRAIL_HOOKS: readonly GuardrailHook[] = ['beforeRequestHook', 'afterRequestHook'];

/** The gateway's endpoint families, plus Anthropic's native `/v1/messages` and MCP tool calls. */
export type GuardrailEndpoint = EndpointType | 'messages' | 'mcp';

/**
 * Settings of the server that change what checks may do. Both default to off: URLs found in
 * requests and answers are untrusted, and URLs in guardrail parameters are written by
 * workspace admins, not by the operator.
 */
export interface GuardrailServerOptions {
  /** inlineImageUrls and validUrls may fetch private, loopback, link-local and unique-local addresses. */
  allowPrivateContentUrls: boolean;
  /** webhook, jwt (the JWKS) and thirdPartyDetection may reach private addresses. */
  allowPrivateCheckEndpoints: boolean;
  /**
   * Hosts (`name` or `name:port`, as in the URL) any check may reach even though they are
   * private: the operator's own webhook or JWKS service, without opening all private space.
   */
  privateHostAllowlist?: readonly string[];
}

export const DEFAULT_SERVER_OPTIONS: GuardrailServerOptions = Object.freeze({
  allowPrivateContentUrls: false,
  allowPrivateCheckEndpoints: false,
});

/** What a check sees of one request at one hook. */
export interface GuardrailContext {
  hook: GuardrailHook;
  endpoint: GuardrailEndpoint;
  request: {
    /** The body as the provider will receive it in the OpenAI (or Anthropic messages) shape. */
    json: unknown;
    /** Lower-case names. */
    headers: Readonly<Record<string, string>>;
  };
  /** afterRequestHook only. */
  response?: {
    json?: unknown;
    /** A streamed answer: the text accumulated from its events (no `json`). */
    streamText?: string;
    status?: number;
  };
  metadata: Readonly<Record<string, string>>;
  model?: string | undefined;
  provider?: string | undefined;
  /** Aborted when the client goes away or the check's time is up. */
  signal: AbortSignal;
  server: GuardrailServerOptions;
  /**
   * Texts already read from the bodies in this hook run (see text/context-text.ts): the checks
   * of one run read the same bodies, so their texts are extracted once. Absent: read each time.
   */
  texts?: TextCache | undefined;
}

/** One hook run's texts, kept by text/context-text.ts (createTextCache); opaque elsewhere. */
export interface TextCache {
  readonly textCache: true;
}

/** What one check says. `transformed` carries whole new bodies, in the shape they came in. */
export interface CheckResult {
  verdict: boolean;
  explanation: string;
  data?: Record<string, unknown>;
  transformed?: { request?: unknown; response?: unknown };
  error?: string;
}

export type CheckProblem = { message: string; param: string };

/** A check with its parameters validated, ready to run. */
export interface PreparedCheck {
  timeoutMs: number;
  /** Whether an error or a time-out counts as a failed check. */
  failOnError: boolean;
  /** A plain result when the check judged without waiting (most built-ins). */
  run(context: GuardrailContext): Promise<CheckResult> | CheckResult;
  /**
   * The check never changes the bodies and has no effect beyond its result: the runner may
   * start it together with the read-only checks before it, on the same body.
   */
  readOnly?: boolean;
}

/** One built-in check, with the types of its parameters erased (see defineCheck). */
export interface CheckDefinition {
  id: string;
  hooks: readonly GuardrailHook[];
  prepare(parameters: unknown): { ok: true; check: PreparedCheck } | { ok: false; problem: CheckProblem };
  /** Parameters with their secret values replaced, for showing back. */
  redact(parameters: unknown): unknown;
}
