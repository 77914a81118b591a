import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { runChecks, type CheckRunResult, type RunOutcome } from '../../guardrails/run-checks.js';
import type { ResolvedGuardrail } from '../../guardrails/store/index.js';
import { createTextCache } from '../../guardrails/text/context-text.js';
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
  /** The visible results as JSON, with how many results it holds: the answer's and the log's text. */
  private serialised: { before: number; after: number; json: string } | null = null;

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
    // The guardrails of this run read the same bodies: their texts are extracted once.
    const texts = createTextCache();
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
        texts,
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

  /**
   * `JSON.stringify(this.visible())`, made once for the answer and the log record: with no
   * async guardrail the two are the same results, and results are only ever added.
   */
  visibleJson(): string {
    const { serialised } = this;
    if (serialised && serialised.before === this.before.length && serialised.after === this.after.length)
      return serialised.json;
    const json = JSON.stringify(this.visible());
    this.serialised = this.pending.length === 0 ? { before: this.before.length, after: this.after.length, json } : null;
    return json;
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

  /** `settled()` with the results as the log keeps them (JSON), made once when the answer had them. */
  async settledJson(): Promise<{ json: string; verdict: GuardrailVerdict | null }> {
    if (this.pending.length > 0) {
      const { results, verdict } = await this.settled();
      return { json: JSON.stringify(results), verdict };
    }
    // Without async guardrails every result is visible: the log's results are the answer's.
    const json = this.visibleJson();
    return { json, verdict: verdictOf({ before_request_hooks: this.before, after_request_hooks: this.after }) };
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
    const checks: CheckResultView[] = [];
    let errors = '';
    for (const result of outcome.results) {
      if (result.skipped) continue;
      const check = checkView(result, created);
      checks.push(check);
      if (check.error !== null) errors += `${errors === '' ? '' : '; '}${check.id}: ${check.error.message}`;
    }
    // Fields in the order the answer and the log have always shown them.
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
      error: errors === '' ? null : { message: errors },
      execution_time: Math.max(0, this.deps.clock.now() - started),
      created_at: created,
    };
    if (guardrail.id) {
      view.guardrail_id = guardrail.id;
      view.guardrail_version_id = guardrail.version_id;
    }
    if (!outcome.verdict && guardrail.actions.message) view.message = guardrail.actions.message;
    return view;
  }

  /** The guardrail's `on_success` / `on_fail` feedback, on the trace and in its result. */
  private feedback(guardrail: ResolvedGuardrail, view: HookResultView): void {
    const { feedback } = view.verdict ? guardrail.actions.on_success : guardrail.actions.on_fail;
    const successful: string[] = [];
    const failed: string[] = [];
    const errored: string[] = [];
    for (const check of view.checks) {
      if (check.verdict && check.error === null) successful.push(check.id);
      if (!check.verdict) failed.push(check.id);
      if (check.error !== null) errored.push(check.id);
    }
    const metadata: Record<string, string> = {
      successfulChecks: successful.join(','),
      failedChecks: failed.join(','),
      erroredChecks: errored.join(','),
    };
    if (feedback.metadata) metadata.note = feedback.metadata;
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
