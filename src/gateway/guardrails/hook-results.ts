import { errorBody } from '../../lib/errors.js';

export type HookPoint = 'beforeRequestHook' | 'afterRequestHook';

/** One check's outcome inside a hook result (the established gateway's field names). */
export interface CheckResultView {
  id: string;
  verdict: boolean;
  /** Why, in a sentence. */
  explanation: string;
  /** Set when the check could not decide (timeout, unreachable webhook); its verdict then follows its fail-on-error setting. */
  error: { message: string } | null;
  data: unknown;
  /** Milliseconds. */
  execution_time: number;
  created_at: string;
}

export interface HookFeedbackView {
  value: number;
  weight: number;
  /** successfulChecks, failedChecks, erroredChecks: check ids, comma-separated; note: the guardrail's own metadata. */
  metadata: Record<string, string>;
}

/** One guardrail's result at one hook point, as the client and the log see it. */
export interface HookResultView {
  /** The guardrail's slug, else its inline id, else where it was named. */
  id: string;
  type: 'guardrail';
  hook: HookPoint;
  verdict: boolean;
  deny: boolean;
  async: boolean;
  /** The established gateway's field for a hook that did not run; every result here ran (false). */
  skipped: boolean;
  checks: CheckResultView[];
  feedback: HookFeedbackView | null;
  error: { message: string } | null;
  execution_time: number;
  created_at: string;
  /** A stored guardrail's id and the version that ran. */
  guardrail_id?: string;
  guardrail_version_id?: string | null;
  /** The guardrail's own message (`{onFail: "block", message}`), when it failed. */
  message?: string;
}

export interface HookResultsView {
  before_request_hooks: HookResultView[];
  after_request_hooks: HookResultView[];
}

export type GuardrailVerdict = 'passed' | 'failed' | 'denied';

/**
 * The request's verdict: denied when a failed guardrail denied it, failed when one failed, else
 * passed. An async guardrail never denies (it judged beside the request), so at most it fails.
 */
export function verdictOf(results: HookResultsView): GuardrailVerdict | null {
  const all = [...results.before_request_hooks, ...results.after_request_hooks].filter((r) => !r.skipped);
  if (all.length === 0) return null;
  if (all.some((r) => !r.verdict && r.deny && !r.async)) return 'denied';
  if (all.some((r) => !r.verdict)) return 'failed';
  return 'passed';
}

/** Status of an answer whose guardrails failed without denying: the established gateway's 246. */
export const HOOKS_FAILED_STATUS = 246;

/** The 446 body: the one error body plus every hook's results. */
export function deniedBody(results: HookResultsView) {
  const all = [...results.before_request_hooks, ...results.after_request_hooks];
  const denying = all.find((r) => !r.verdict && r.deny);
  const message =
    denying?.message ??
    `Guardrail ${denying?.id ?? ''} failed and denies the request; \`hook_results\` says which checks and why.`;
  return { ...errorBody('HOOKS_DENIED', message), hook_results: results };
}

/** The extra event a stream carries with the verdict, before `data: [DONE]`. */
export const verdictEvent = (results: HookResultsView) => `data: ${JSON.stringify({ hook_results: results })}\n\n`;

/** `verdictEvent` of results already serialised (`resultsJson`): the same text. */
export const verdictEventOf = (resultsJson: string) => `data: {"hook_results":${resultsJson}}\n\n`;

/**
 * `JSON.stringify({ ...body, hook_results })` with the results already serialised: the same
 * text (the spread puts `hook_results` last unless the body has one of its own, whose place it
 * then takes), without serialising the results a second time for the log.
 */
export function withHookResults(body: Record<string, unknown>, resultsJson: string): string {
  if (Object.hasOwn(body, 'hook_results'))
    return JSON.stringify({ ...body, hook_results: JSON.parse(resultsJson) as unknown });
  const head = JSON.stringify(body);
  return head === '{}' ? `{"hook_results":${resultsJson}}` : `${head.slice(0, -1)},"hook_results":${resultsJson}}`;
}

const CLOSING_BRACE = 0x7d;
const JSON_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * The answer `bytes` (a JSON object, parsed as `body`) with `"hook_results"` added as its last
 * member: the provider's text as it came, where `withHookResults` writes the parsed body again.
 * The same JSON value (only the provider's spacing and key order stay); a body with its own
 * `hook_results` goes through `withHookResults`, whose result takes that member's place.
 */
export function withHookResultsAfter(
  bytes: Buffer,
  body: Record<string, unknown>,
  resultsJson: string,
): Buffer | string {
  let close = bytes.length - 1;
  while (close >= 0 && JSON_WHITESPACE.has(bytes[close]!)) close--;
  if (close < 0 || bytes[close] !== CLOSING_BRACE || Object.hasOwn(body, 'hook_results'))
    return withHookResults(body, resultsJson);
  // Written piece by piece: a joined string would be flattened once to count and once to encode.
  const member = hasMembers(body) ? ',"hook_results":' : '"hook_results":';
  const out = Buffer.allocUnsafe(close + member.length + Buffer.byteLength(resultsJson) + 1);
  let at = bytes.copy(out, 0, 0, close);
  at += out.write(member, at, 'latin1');
  at += out.write(resultsJson, at, 'utf8');
  out[at] = CLOSING_BRACE;
  return out;
}

function hasMembers(body: Record<string, unknown>): boolean {
  for (const key in body) if (Object.hasOwn(body, key)) return true;
  return false;
}
