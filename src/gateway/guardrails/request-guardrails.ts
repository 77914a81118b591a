import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { runChecks, type CheckRunResult, type RunOutcome } from '../../guardrails/run-checks.js';
import type { ResolvedGuardrail } from '../../guardrails/store/index.js';
import type { GuardrailContext, GuardrailHook, GuardrailServerOptions } from '../../guardrails/types.js';
import {
  verdictOf,
  type CheckResultView,
  type GuardrailVerdict,
  type HookResultView,
  type HookResultsView,
} from './hook-results.js';

/** Feedback a guardrail's `on_success` / `on_fail` gives, recorded on the request's trace. */
export interface GuardrailFeedback {
  traceId: string;
  value: number;
  weight: number;
  metadata: Record<string, string>;
}

export interface GuardrailRunDeps {
  clock: Clock;
  server: GuardrailServerOptions;
  recordFeedback: (feedback: GuardrailFeedback) => void;
}

/** What every check of one request sees besides the bodies. */
export interface RequestFacts {
  endpoint: GuardrailContext['endpoint'];
  headers: Readonly<Record<string, string>>;
  metadata: Readonly<Record<string, string>>;
  model: string | undefined;
  traceId: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

export interface HookPass {
  /** A failed guardrail with `deny` stopped the request. */
  denied: boolean;
  /** The request body after every change (the same object when nothing changed). */
  request: unknown;
  /** The answer body after every change (afterRequestHook on a JSON answer). */
  response?: unknown;
  changed: boolean;
}

/**
 * The guardrails of one request and their results so far. Guardrails at one hook run one after
 * the other, so that one that rewrites the request (redaction, a prefix) hands the next the
 * rewritten body; one that fails with `deny` stops the rest. Async guardrails run beside the
 * request on a copy of what it had then, and only record.
 */
export class GuardrailRun {
  readonly before: HookResultView[] = [];
  readonly after: HookResultView[] = [];
  private readonly pending: Array<Promise<void>> = [];

  constructor(
    private readonly deps: GuardrailRunDeps,
    private readonly facts: RequestFacts,
  ) {}

  /** Runs guardrails at a hook point on the request (and the answer, after the provider). */
  async run(
    hook: GuardrailHook,
    guardrails: readonly ResolvedGuardrail[],
    bodies: { request: unknown; response?: { json?: unknown; streamText?: string; status: number } },
    provider?: string,
  ): Promise<HookPass> {
    let request = bodies.request;
    let response = bodies.response?.json;
    let changed = false;
    const into = hook === 'beforeRequestHook' ? this.before : this.after;
    for (const guardrail of guardrails) {
      const context: GuardrailContext = {
        hook,
        endpoint: this.facts.endpoint,
        request: { json: request, headers: this.facts.headers },
        ...(bodies.response
          ? {
              response: {
                ...(response !== undefined ? { json: response } : {}),
                ...(bodies.response.streamText !== undefined ? { streamText: bodies.response.streamText } : {}),
                status: bodies.response.status,
              },
            }
          : {}),
        metadata: this.facts.metadata,
        model: this.facts.model,
        provider,
        signal: this.facts.signal,
        server: this.deps.server,
      };
      if (guardrail.actions.async) {
        this.pending.push(this.judge(guardrail, hook, context).then((view) => void into.push(view)));
        continue;
      }
      const started = this.deps.clock.now();
      const outcome = await runChecks(guardrail.checks, context, { clock: this.deps.clock });
      const view = this.view(guardrail, hook, outcome, started);
      into.push(view);
      this.feedback(guardrail, view);
      if (outcome.transformed) {
        changed = true;
        request = outcome.request;
        if (outcome.response !== undefined) response = outcome.response;
      }
      if (!view.verdict && guardrail.actions.deny) return { denied: true, request, response, changed };
    }
    return { denied: false, request, ...(response !== undefined ? { response } : {}), changed };
  }

  /** The results the client sees: async guardrails are left out (they only record). */
  visible(): HookResultsView {
    return {
      before_request_hooks: this.before.filter((r) => !r.async),
      after_request_hooks: this.after.filter((r) => !r.async),
    };
  }

  /** True when a guardrail the client sees failed (the answer then says 246). */
  anyFailed(): boolean {
    const { before_request_hooks: before, after_request_hooks: after } = this.visible();
    return [...before, ...after].some((r) => !r.verdict);
  }

  get ran(): boolean {
    return this.before.length > 0 || this.after.length > 0 || this.pending.length > 0;
  }

  /** Everything for the log, once the async guardrails have finished. */
  async settled(): Promise<{ results: HookResultsView; verdict: GuardrailVerdict | null }> {
    await Promise.all(this.pending);
    const results = { before_request_hooks: this.before, after_request_hooks: this.after };
    return { results, verdict: verdictOf(results) };
  }

  private async judge(guardrail: ResolvedGuardrail, hook: GuardrailHook, context: GuardrailContext) {
    const started = this.deps.clock.now();
    const outcome = await runChecks(guardrail.checks, context, { clock: this.deps.clock });
    const view = this.view(guardrail, hook, outcome, started);
    this.feedback(guardrail, view);
    return view;
  }

  private view(guardrail: ResolvedGuardrail, hook: GuardrailHook, outcome: RunOutcome, started: number) {
    const created = new Date(started).toISOString();
    const checks = outcome.results.filter((r) => !r.skipped).map((r) => checkView(r, created));
    const errors = checks.filter((c) => c.error !== null);
    const view: HookResultView = {
      id: guardrail.slug ?? guardrail.name ?? guardrail.source,
      type: 'guardrail',
      hook,
      verdict: outcome.verdict,
      deny: guardrail.actions.deny,
      async: guardrail.actions.async,
      skipped: false,
      checks,
      feedback: null,
      error: errors.length > 0 ? { message: errors.map((c) => `${c.id}: ${c.error!.message}`).join('; ') } : null,
      execution_time: Math.max(0, this.deps.clock.now() - started),
      created_at: created,
      ...(guardrail.id ? { guardrail_id: guardrail.id, guardrail_version_id: guardrail.version_id } : {}),
      ...(!outcome.verdict && guardrail.actions.message ? { message: guardrail.actions.message } : {}),
    };
    return view;
  }

  /** The guardrail's `on_success` / `on_fail` feedback, on the trace and in its result. */
  private feedback(guardrail: ResolvedGuardrail, view: HookResultView): void {
    const { feedback } = view.verdict ? guardrail.actions.on_success : guardrail.actions.on_fail;
    const ids = (pick: (c: CheckResultView) => boolean) =>
      view.checks
        .filter(pick)
        .map((c) => c.id)
        .join(',');
    const metadata = {
      successfulChecks: ids((c) => c.verdict && c.error === null),
      failedChecks: ids((c) => !c.verdict),
      erroredChecks: ids((c) => c.error !== null),
      ...(feedback.metadata ? { note: feedback.metadata } : {}),
    };
    view.feedback = { value: feedback.value, weight: feedback.weight, metadata };
    if (feedback.weight > 0)
      this.deps.recordFeedback({
        traceId: this.facts.traceId,
        value: feedback.value,
        weight: feedback.weight,
        metadata,
      });
  }
}

function checkView(result: CheckRunResult, createdAt: string): CheckResultView {
  return {
    id: result.id,
    verdict: result.verdict,
    explanation: result.explanation,
    error: result.error === undefined ? null : { message: result.error },
    data: result.data ?? null,
    execution_time: result.durationMs,
    created_at: createdAt,
  };
}

/**
 * A reference the config or the workspace defaults make that names no usable guardrail: the
 * request is refused rather than run without it.
 */
export function unavailableGuardrails(missing: ReadonlyArray<{ ref: string; source: string }>): AppError {
  const first = missing[0]!;
  return new AppError(
    'GUARDRAIL_UNAVAILABLE',
    `Guardrail ${first.ref} (${first.source}) does not exist or cannot be used from this workspace; the request is not sent without it.`,
    { param: first.source },
  );
}

/** Request headers as checks see them: lower-case names, string values. */
export function headerRecord(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') out[name] = value;
    else if (Array.isArray(value)) out[name] = value.join(', ');
  }
  return out;
}
