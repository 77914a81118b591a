import { isoAt, type Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';
import {
  runChecks,
  runChecksNow,
  type CheckRunResult,
  type RunOptions,
  type RunOutcome,
} from '../../guardrails/run-checks.js';
import type { ResolvedGuardrail } from '../../guardrails/store/index.js';
import { createTextCache } from '../../guardrails/text/context-text.js';
import type { GuardrailContext, GuardrailHook, GuardrailServerOptions, TextCache } from '../../guardrails/types.js';
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
  /** The request's headers as checks see them, or how to make them when a check first reads them (few do). */
  headers: Readonly<Record<string, string>> | (() => Readonly<Record<string, string>>);
  metadata: Readonly<Record<string, string>>;
  model: string | undefined;
  traceId: string;
  /** Aborted when the client goes away; or a holder that makes the signal when a check first reads it. */
  signal: AbortSignal | LazySignal;
}

/** A request's abort signal made on first read, and whether the request was aborted, asked without making it. */
export interface LazySignal {
  readonly aborted: boolean;
  readonly signal: AbortSignal;
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
  private headerRecord: Readonly<Record<string, string>> | null = null;
  /** What every run of checks is given: the clock, and whether the request was aborted (the signal is not made to ask). */
  private readonly options: RunOptions;

  constructor(
    private readonly deps: GuardrailRunDeps,
    readonly facts: RequestFacts,
  ) {
    this.options = { clock: deps.clock, aborted: () => facts.signal.aborted };
  }

  /** Runs guardrails at a hook point on the request (and the answer, after the provider). */
  async run(
    hook: GuardrailHook,
    guardrails: readonly ResolvedGuardrail[],
    bodies: HookBodies,
    provider?: string,
  ): Promise<HookPass> {
    return this.runNow(hook, guardrails, bodies, provider);
  }

  /**
   * `run`, with the pass itself (no promise) when no check waited: the built-in checks that need
   * no network or regex worker judge at once.
   */
  runNow(
    hook: GuardrailHook,
    guardrails: readonly ResolvedGuardrail[],
    bodies: HookBodies,
    provider?: string,
  ): HookPass | Promise<HookPass> {
    // The guardrails of this run read the same bodies: their texts are extracted once.
    const state: HookState = {
      hook,
      guardrails,
      bodies,
      provider,
      request: bodies.request,
      response: bodies.response?.json,
      changed: false,
      texts: createTextCache(),
    };
    // With an async guardrail at this hook, the order its result (and its feedback) takes among
    // the others' is the one a turn per guardrail gives: kept as it was.
    for (const guardrail of guardrails) if (guardrail.actions.async) return this.inTurns(state);
    return this.from(state, 0);
  }

  /** The guardrails one after the other, each awaited (a hook with an async guardrail). */
  private async inTurns(state: HookState): Promise<HookPass> {
    const into = state.hook === 'beforeRequestHook' ? this.before : this.after;
    for (const guardrail of state.guardrails) {
      const context = new HookContext(this, state);
      if (guardrail.actions.async) {
        this.pending.push(this.judge(guardrail, state.hook, context).then((view) => void into.push(view)));
        continue;
      }
      const started = this.deps.clock.now();
      const outcome = await runChecks(guardrail.checks, context, this.options);
      const denied = this.judged(state, guardrail, outcome, started);
      if (denied) return denied;
    }
    const { request, response, changed } = state;
    return response !== undefined ? { denied: false, request, response, changed } : { denied: false, request, changed };
  }

  /** The guardrails (none async) from `index` on; a promise only from the first one whose checks wait. */
  private from(state: HookState, index: number): HookPass | Promise<HookPass> {
    const { guardrails } = state;
    for (; index < guardrails.length; index++) {
      const guardrail = guardrails[index]!;
      const context = new HookContext(this, state);
      const started = this.deps.clock.now();
      const outcome = runChecksNow(guardrail.checks, context, this.options);
      if (outcome instanceof Promise) {
        const at = index;
        return outcome.then((done) => this.judged(state, guardrail, done, started) ?? this.from(state, at + 1));
      }
      const denied = this.judged(state, guardrail, outcome, started);
      if (denied) return denied;
    }
    const { request, response, changed } = state;
    return response !== undefined ? { denied: false, request, response, changed } : { denied: false, request, changed };
  }

  /** Records one guardrail's outcome; the pass that ends the run when it denies, else null. */
  private judged(state: HookState, guardrail: ResolvedGuardrail, outcome: RunOutcome, started: number) {
    const view = this.view(guardrail, state.hook, outcome, started);
    (state.hook === 'beforeRequestHook' ? this.before : this.after).push(view);
    this.feedback(guardrail, view);
    if (outcome.transformed) {
      state.changed = true;
      state.request = outcome.request;
      if (outcome.response !== undefined) state.response = outcome.response;
    }
    if (!view.verdict && guardrail.actions.deny)
      return { denied: true, request: state.request, response: state.response, changed: state.changed };
    return null;
  }

  /** The request's headers as checks see them, made when a check first reads them. */
  headers(): Readonly<Record<string, string>> {
    const { headers } = this.facts;
    if (typeof headers !== 'function') return headers;
    return (this.headerRecord ??= headers());
  }

  get server(): GuardrailServerOptions {
    return this.deps.server;
  }

  /** The request's abort signal (made on first read when the facts hold a lazy one). */
  get signal(): AbortSignal {
    const { signal } = this.facts;
    return signal instanceof AbortSignal ? signal : signal.signal;
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
    for (const r of this.before) if (!r.async && !r.verdict) return true;
    for (const r of this.after) if (!r.async && !r.verdict) return true;
    return false;
  }

  /** Whether the client sees any result (`visible()` is not empty). */
  anyVisible(): boolean {
    for (const r of this.before) if (!r.async) return true;
    for (const r of this.after) if (!r.async) return true;
    return false;
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

  /**
   * `settled()` with the results as the log keeps them (JSON), made once when the answer had
   * them; at once when no async guardrail is still running.
   */
  settledJson(): MaybePromise<{ json: string; verdict: GuardrailVerdict | null }> {
    if (this.pending.length > 0)
      return this.settled().then(({ results, verdict }) => ({ json: JSON.stringify(results), verdict }));
    // Without async guardrails every result is visible: the log's results are the answer's.
    const json = this.visibleJson();
    return { json, verdict: verdictOf({ before_request_hooks: this.before, after_request_hooks: this.after }) };
  }

  private async judge(guardrail: ResolvedGuardrail, hook: GuardrailHook, context: GuardrailContext) {
    const started = this.deps.clock.now();
    const outcome = await runChecks(guardrail.checks, context, this.options);
    const view = this.view(guardrail, hook, outcome, started);
    this.feedback(guardrail, view);
    return view;
  }

  private view(guardrail: ResolvedGuardrail, hook: GuardrailHook, outcome: RunOutcome, started: number) {
    const created = isoAt(started);
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
    // Comma-separated check ids, built as strings: three arrays and their joins per guardrail showed in profiles.
    let successfulChecks = '';
    let failedChecks = '';
    let erroredChecks = '';
    for (const check of view.checks) {
      if (check.verdict && check.error === null)
        successfulChecks += successfulChecks === '' ? check.id : `,${check.id}`;
      if (!check.verdict) failedChecks += failedChecks === '' ? check.id : `,${check.id}`;
      if (check.error !== null) erroredChecks += erroredChecks === '' ? check.id : `,${check.id}`;
    }
    const metadata: Record<string, string> = { successfulChecks, failedChecks, erroredChecks };
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

/** The bodies a hook run judges. */
export interface HookBodies {
  request: unknown;
  response?: { json?: unknown; streamText?: string; status: number };
}

/** One hook run as it goes: the bodies as changed by the guardrails so far. */
interface HookState {
  hook: GuardrailHook;
  guardrails: readonly ResolvedGuardrail[];
  bodies: HookBodies;
  provider: string | undefined;
  request: unknown;
  response: unknown;
  changed: boolean;
  texts: TextCache;
}

/** The request as one guardrail's checks see it: the headers are made when a check first reads them. */
class HookRequest {
  constructor(
    readonly json: unknown,
    private readonly run: GuardrailRun,
  ) {}

  get headers(): Readonly<Record<string, string>> {
    return this.run.headers();
  }
}

/**
 * What one guardrail's checks see. A class with getters rather than an object literal: the
 * request's signal and headers are made only when a check reads them (most never do).
 */
class HookContext implements GuardrailContext {
  readonly hook: GuardrailHook;
  readonly endpoint: GuardrailContext['endpoint'];
  readonly request: GuardrailContext['request'];
  readonly response: GuardrailContext['response'];
  readonly metadata: GuardrailContext['metadata'];
  readonly model: GuardrailContext['model'];
  readonly provider: GuardrailContext['provider'];
  readonly server: GuardrailContext['server'];
  readonly texts: TextCache;

  constructor(
    private readonly run: GuardrailRun,
    state: HookState,
  ) {
    const { facts } = run;
    this.hook = state.hook;
    this.endpoint = facts.endpoint;
    this.request = new HookRequest(state.request, run);
    const answer = state.bodies.response;
    if (answer) {
      const response: NonNullable<GuardrailContext['response']> = {};
      if (state.response !== undefined) response.json = state.response;
      if (answer.streamText !== undefined) response.streamText = answer.streamText;
      response.status = answer.status;
      this.response = response;
    }
    this.metadata = facts.metadata;
    this.model = facts.model;
    this.provider = state.provider;
    this.server = run.server;
    this.texts = state.texts;
  }

  get signal(): AbortSignal {
    return this.run.signal;
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
