/**
 * Runs a guardrail's checks on one request at one hook. It never throws and never waits on a
 * check past the check's own time limit: a check that throws, rejects or runs out of time
 * gives an error result whose verdict follows the check's `failOnError` (on by default: a
 * check that cannot judge fails; inlineImageUrls, webhook and thirdPartyDetection default
 * to off, as the reference has it). Checks run one after the other, so that a check that
 * rewrites the request (addPrefix, pii with redact, inlineImageUrls, webhook) hands the
 * next check the rewritten body.
 */
import { systemClock, type Clock } from '../lib/clock.js';
import { builtInCheckId } from './check-ids.js';
import { CHECKS } from './checks/index.js';
import { applyTransform, settle, systemTimers, type Settled, type Timers } from './check-settle.js';
import type { CheckDefinition, GuardrailContext, PreparedCheck } from './types.js';

/** One entry of a guardrail's `checks` (the reference's GuardrailCheck). */
export interface CheckSpec {
  id: string;
  parameters?: unknown;
  name?: string | undefined;
  /** Default true. */
  is_enabled?: boolean | undefined;
}

export interface CheckRunResult {
  id: string;
  name?: string;
  verdict: boolean;
  explanation: string;
  data?: Record<string, unknown>;
  error?: string;
  /** True when the check did not judge: disabled, or not made for this hook. */
  skipped: boolean;
  timedOut: boolean;
  /** True when this check changed the request or the answer. */
  transformed: boolean;
  /** Per the clock given in the options. */
  durationMs: number;
}

export interface RunOutcome {
  /** True when every check that ran passed. */
  verdict: boolean;
  results: CheckRunResult[];
  /** True when any check changed the request or the answer. */
  transformed: boolean;
  /** The request body after every change (the same object when nothing changed). */
  request: unknown;
  /** The answer body after every change (afterRequestHook with a JSON answer). */
  response?: unknown;
}

export interface RunOptions {
  clock?: Clock;
  timers?: Timers;
  /** An upper bound on every check's own time limit (e.g. what is left of the request's). */
  maxTimeoutMs?: number;
  /**
   * Whether the request was aborted, asked instead of `context.signal.aborted`: the request's
   * signal may be made on first read (most checks never read it), and this asks without making it.
   */
  aborted?: () => boolean;
  /** The checks by id; tests give their own. */
  catalogue?: Readonly<Record<string, CheckDefinition>>;
}

export async function runChecks(
  checks: readonly CheckSpec[],
  context: GuardrailContext,
  options: RunOptions = {},
): Promise<RunOutcome> {
  return runChecksNow(checks, context, options);
}

/**
 * `runChecks`, with the outcome itself (no promise) when every check judged without waiting, as
 * the built-ins that need no network or regex worker do: a guarded request then runs its checks
 * without a promise per guardrail.
 */
export function runChecksNow(
  checks: readonly CheckSpec[],
  context: GuardrailContext,
  options: RunOptions = {},
): RunOutcome | Promise<RunOutcome> {
  return new CheckRun(checks, context, options).from(0);
}

/** One run of a guardrail's checks: the checks in order, waiting only on a check that waits. */
class CheckRun {
  private readonly clock: Clock;
  private readonly timers: Timers;
  private current: GuardrailContext;
  private readonly results: CheckRunResult[] = [];
  /** Made only when a read-only check that waits starts the ones after it (regexMatch on the worker). */
  private startedAhead: Map<number, { at: number; pending: Settled | Promise<Settled> }> | null = null;

  constructor(
    private readonly checks: readonly CheckSpec[],
    context: GuardrailContext,
    private readonly options: RunOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? systemTimers;
    this.current = context;
  }

  /** Runs the checks from `index` on; a promise only from the first check that waits. */
  from(index: number): RunOutcome | Promise<RunOutcome> {
    const { checks, options } = this;
    for (; index < checks.length; index++) {
      const spec = checks[index]!;
      let started = this.clock.now();
      const definition = definitionOf(spec.id, options.catalogue);
      if (spec.is_enabled === false) {
        this.push(spec, started, {
          verdict: true,
          explanation: 'Check disabled.',
          skipped: true,
          timedOut: false,
          transformed: false,
        });
        continue;
      }
      if (!definition) {
        this.push(spec, started, errorResult(`unknown check id '${spec.id}'`, true, false));
        continue;
      }
      if (!definition.hooks.includes(this.current.hook)) {
        const explanation = `Check ${definition.id} does not run at ${this.current.hook}.`;
        this.push(spec, started, { verdict: true, explanation, skipped: true, timedOut: false, transformed: false });
        continue;
      }
      const prepared = prepareOnce(definition, spec.parameters);
      if (!prepared.ok) {
        const { message, param } = prepared.problem;
        this.push(
          spec,
          started,
          errorResult(`invalid parameters${param ? ` (${param})` : ''}: ${message}`, true, false),
        );
        continue;
      }
      const check = prepared.check;
      const timeoutMs = Math.min(check.timeoutMs, options.maxTimeoutMs ?? Infinity);
      const ahead = this.startedAhead?.get(index);
      if (ahead) started = ahead.at;
      const pending = ahead ? ahead.pending : this.settle(check, this.current, timeoutMs);
      if (check.readOnly && pending instanceof Promise) this.startAhead(index);
      if (pending instanceof Promise) {
        const at = index;
        const from = started;
        return pending.then((settled) => {
          this.judged(spec, from, check, timeoutMs, settled);
          return this.from(at + 1);
        });
      }
      this.judged(spec, started, check, timeoutMs, pending);
    }
    return this.outcome();
  }

  /**
   * The read-only checks right after the one at `index` judge the same body: they start now, so
   * that several regexMatch checks of a request share one message to the regex worker.
   */
  private startAhead(index: number): void {
    const { checks, options } = this;
    const startedAhead = (this.startedAhead ??= new Map());
    for (let next = index + 1; next < checks.length && !startedAhead.has(next); next++) {
      const following = readyCheck(checks[next]!, this.current.hook, options.catalogue);
      if (!following?.readOnly) break;
      const limit = Math.min(following.timeoutMs, options.maxTimeoutMs ?? Infinity);
      startedAhead.set(next, { at: this.clock.now(), pending: this.settle(following, this.current, limit) });
    }
  }

  private settle(check: PreparedCheck, context: GuardrailContext, timeoutMs: number): Settled | Promise<Settled> {
    return settle(check, context, timeoutMs, this.timers, this.options.aborted);
  }

  /** The result of a check that judged (or could not). */
  private judged(spec: CheckSpec, started: number, check: PreparedCheck, timeoutMs: number, settled: Settled): void {
    if (settled.kind === 'timeout') {
      this.push(spec, started, errorResult(`timed out after ${timeoutMs} ms`, check.failOnError, true));
      return;
    }
    if (settled.kind === 'error') {
      this.push(spec, started, errorResult(settled.message, check.failOnError, false));
      return;
    }
    const { result } = settled;
    const next = applyTransform(this.current, result.transformed);
    this.push(spec, started, {
      verdict: result.error !== undefined && check.failOnError ? false : result.verdict,
      explanation: result.explanation,
      data: result.data,
      error: result.error,
      skipped: false,
      timedOut: false,
      transformed: next !== this.current,
    });
    this.current = next;
  }

  /** Built field by field: a spread per result showed in profiles of guarded requests. */
  private push(spec: CheckSpec, started: number, rest: Omit<CheckRunResult, 'id' | 'name' | 'durationMs'>): void {
    const result: CheckRunResult = { id: spec.id } as CheckRunResult;
    if (spec.name !== undefined) result.name = spec.name;
    result.verdict = rest.verdict;
    result.explanation = rest.explanation;
    if (rest.data !== undefined) result.data = rest.data;
    if (rest.error !== undefined) result.error = rest.error;
    result.skipped = rest.skipped;
    result.timedOut = rest.timedOut;
    result.transformed = rest.transformed;
    result.durationMs = Math.max(0, this.clock.now() - started);
    this.results.push(result);
  }

  private outcome(): RunOutcome {
    const { results, current } = this;
    let verdict = true;
    let transformed = false;
    for (const r of results) {
      if (!r.skipped && !r.verdict) verdict = false;
      if (r.transformed) transformed = true;
    }
    const outcome: RunOutcome = { verdict, results, transformed, request: current.request.json };
    if (current.response?.json !== undefined) outcome.response = current.response.json;
    return outcome;
  }
}

/** The check a spec stands for when it runs at this hook (enabled, known, valid), else null. */
function readyCheck(
  spec: CheckSpec,
  hook: GuardrailContext['hook'],
  catalogue?: Readonly<Record<string, CheckDefinition>>,
): PreparedCheck | null {
  if (spec.is_enabled === false) return null;
  const definition = definitionOf(spec.id, catalogue);
  if (!definition || !definition.hooks.includes(hook)) return null;
  const prepared = prepareOnce(definition, spec.parameters);
  return prepared.ok ? prepared.check : null;
}

/**
 * Parameters are validated once per parameters object: stored guardrails keep theirs in the
 * lookup's cache, so a request does not parse them with zod again.
 */
type Prepared = ReturnType<CheckDefinition['prepare']>;
const preparedChecks = new WeakMap<object, Map<string, Prepared>>();

function prepareOnce(definition: CheckDefinition, parameters: unknown): Prepared {
  if (typeof parameters !== 'object' || parameters === null) return definition.prepare(parameters);
  let byCheck = preparedChecks.get(parameters);
  if (!byCheck) preparedChecks.set(parameters, (byCheck = new Map<string, Prepared>()));
  let prepared = byCheck.get(definition.id);
  if (!prepared) byCheck.set(definition.id, (prepared = definition.prepare(parameters)));
  return prepared;
}

function definitionOf(id: string, catalogue?: Readonly<Record<string, CheckDefinition>>): CheckDefinition | undefined {
  if (catalogue) return Object.hasOwn(catalogue, id) ? catalogue[id] : undefined;
  const builtIn = builtInCheckId(id);
  return builtIn === null ? undefined : CHECKS[builtIn];
}

function errorResult(message: string, failOnError: boolean, timedOut: boolean) {
  return {
    verdict: !failOnError,
    explanation: failOnError
      ? `The check could not judge (${message}); failOnError makes that a failure.`
      : `The check could not judge (${message}); failOnError is off, so it passes.`,
    error: message,
    skipped: false,
    timedOut,
    transformed: false,
  };
}
