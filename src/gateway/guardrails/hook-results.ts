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
