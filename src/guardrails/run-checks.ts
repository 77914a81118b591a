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
import type { CheckDefinition, CheckResult, GuardrailContext, PreparedCheck } from './types.js';

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

/** setTimeout and clearTimeout, injectable so that tests decide when time is up. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface RunOptions {
  clock?: Clock;
  timers?: Timers;
  /** An upper bound on every check's own time limit (e.g. what is left of the request's). */
  maxTimeoutMs?: number;
  /** The checks by id; tests give their own. */
  catalogue?: Readonly<Record<string, CheckDefinition>>;
}

type Settled = { kind: 'done'; result: CheckResult } | { kind: 'error'; message: string } | { kind: 'timeout' };

export async function runChecks(
  checks: readonly CheckSpec[],
  context: GuardrailContext,
  options: RunOptions = {},
): Promise<RunOutcome> {
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  let current = context;
  const results: CheckRunResult[] = [];
  // Made only when a read-only check that waits starts the ones after it (regexMatch on the worker).
  let startedAhead: Map<number, { at: number; pending: Settled | Promise<Settled> }> | null = null;
  for (let index = 0; index < checks.length; index++) {
    const spec = checks[index]!;
    let started = clock.now();
    // Built field by field: a spread per result showed in profiles of guarded requests.
    const finish = (rest: Omit<CheckRunResult, 'id' | 'name' | 'durationMs'>): CheckRunResult => {
      const result: CheckRunResult = { id: spec.id } as CheckRunResult;
      if (spec.name !== undefined) result.name = spec.name;
      result.verdict = rest.verdict;
      result.explanation = rest.explanation;
      if (rest.data !== undefined) result.data = rest.data;
      if (rest.error !== undefined) result.error = rest.error;
      result.skipped = rest.skipped;
      result.timedOut = rest.timedOut;
      result.transformed = rest.transformed;
      result.durationMs = Math.max(0, clock.now() - started);
      return result;
    };
    const definition = definitionOf(spec.id, options.catalogue);
    if (spec.is_enabled === false) {
      results.push(
        finish({ verdict: true, explanation: 'Check disabled.', skipped: true, timedOut: false, transformed: false }),
      );
      continue;
    }
    if (!definition) {
      results.push(finish(errorResult(`unknown check id '${spec.id}'`, true, false)));
      continue;
    }
    if (!definition.hooks.includes(current.hook)) {
      const explanation = `Check ${definition.id} does not run at ${current.hook}.`;
      results.push(finish({ verdict: true, explanation, skipped: true, timedOut: false, transformed: false }));
      continue;
    }
    const prepared = prepareOnce(definition, spec.parameters);
    if (!prepared.ok) {
      const { message, param } = prepared.problem;
      results.push(finish(errorResult(`invalid parameters${param ? ` (${param})` : ''}: ${message}`, true, false)));
      continue;
    }
    const check = prepared.check;
    const timeoutMs = Math.min(check.timeoutMs, options.maxTimeoutMs ?? Infinity);
    const ahead = startedAhead?.get(index);
    if (ahead) started = ahead.at;
    const pending = ahead ? ahead.pending : settle(check, current, timeoutMs, timers);
    if (check.readOnly && pending instanceof Promise) {
      // The read-only checks right after this one judge the same body: they start now, so that
      // several regexMatch checks of a request share one message to the regex worker.
      startedAhead ??= new Map();
      for (let next = index + 1; next < checks.length && !startedAhead.has(next); next++) {
        const following = readyCheck(checks[next]!, current.hook, options.catalogue);
        if (!following?.readOnly) break;
        const limit = Math.min(following.timeoutMs, options.maxTimeoutMs ?? Infinity);
        startedAhead.set(next, { at: clock.now(), pending: settle(following, current, limit, timers) });
      }
    }
    const settled = pending instanceof Promise ? await pending : pending;
    if (settled.kind === 'timeout') {
      results.push(finish(errorResult(`timed out after ${timeoutMs} ms`, check.failOnError, true)));
      continue;
    }
    if (settled.kind === 'error') {
      results.push(finish(errorResult(settled.message, check.failOnError, false)));
      continue;
    }
    const { result } = settled;
    const next = applyTransform(current, result.transformed);
    results.push(
      finish({
        verdict: result.error !== undefined && check.failOnError ? false : result.verdict,
        explanation: result.explanation,
        data: result.data,
        error: result.error,
        skipped: false,
        timedOut: false,
        transformed: next !== current,
      }),
    );
    current = next;
  }
  let verdict = true;
  let transformed = false;
  for (const r of results) {
    if (!r.skipped && !r.verdict) verdict = false;
    if (r.transformed) transformed = true;
  }
  return {
    verdict,
    results,
    transformed,
    request: current.request.json,
    ...(current.response?.json === undefined ? {} : { response: current.response.json }),
  };
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

/**
 * Runs one check against its time limit; the check's signal is aborted when either ends. A
 * check that answers without waiting (most built-ins) is done at once: no timer, no race.
 */
function settle(
  check: PreparedCheck,
  context: GuardrailContext,
  timeoutMs: number,
  timers: Timers,
): Settled | Promise<Settled> {
  if (context.signal.aborted) return { kind: 'error', message: 'the request was aborted' };
  const own = new CheckSignal(context.signal);
  let returned: Promise<CheckResult> | CheckResult;
  try {
    returned = check.run(withSignal(context, own));
  } catch (error) {
    own.finish();
    return failed(error);
  }
  if (!isThenable(returned)) {
    own.finish();
    return settledOf(returned);
  }
  return race(returned, own, context.signal, timeoutMs, timers);
}

/** The check's answer against its time limit and the request's abort, in one promise. */
function race(
  returned: Promise<CheckResult>,
  own: CheckSignal,
  request: AbortSignal,
  timeoutMs: number,
  timers: Timers,
): Promise<Settled> {
  return new Promise<Settled>((resolve) => {
    let done = false;
    const end = (settled: Settled) => {
      if (done) return;
      done = true;
      timers.clearTimeout(handle);
      request.removeEventListener('abort', onAbort);
      // Whatever is still in flight (a fetch past its time) is told to stop.
      own.finish();
      resolve(settled);
    };
    const onAbort = () => end({ kind: 'error', message: 'the request was aborted' });
    const handle = timers.setTimeout(() => end({ kind: 'timeout' }), timeoutMs);
    request.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(returned).then(
      (result) => end(settledOf(result)),
      (error: unknown) => end(failed(error)),
    );
  });
}

/**
 * The check's own signal, made only when the check reads it (most never do): aborted with the
 * request's, and when the check is over.
 */
class CheckSignal {
  private controller: AbortController | null = null;
  private done = false;
  private readonly forward = () => this.controller?.abort(this.request.reason);

  constructor(private readonly request: AbortSignal) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.done) this.controller.abort(new Error('check finished'));
      else if (this.request.aborted) this.controller.abort(this.request.reason);
      else this.request.addEventListener('abort', this.forward, { once: true });
    }
    return this.controller.signal;
  }

  finish(): void {
    this.done = true;
    if (!this.controller) return;
    this.request.removeEventListener('abort', this.forward);
    if (!this.controller.signal.aborted) this.controller.abort(new Error('check finished'));
  }
}

/**
 * The context a check sees: the runner's, with the check's own signal made on first read. A
 * class rather than a copy with a getter defined on it, which cost more than most checks.
 */
class CheckContext implements GuardrailContext {
  readonly hook: GuardrailContext['hook'];
  readonly endpoint: GuardrailContext['endpoint'];
  readonly request: GuardrailContext['request'];
  readonly response: GuardrailContext['response'];
  readonly metadata: GuardrailContext['metadata'];
  readonly model: GuardrailContext['model'];
  readonly provider: GuardrailContext['provider'];
  readonly server: GuardrailContext['server'];
  readonly texts: GuardrailContext['texts'];

  readonly #own: CheckSignal;

  constructor(context: GuardrailContext, own: CheckSignal) {
    this.#own = own;
    this.hook = context.hook;
    this.endpoint = context.endpoint;
    this.request = context.request;
    this.response = context.response;
    this.metadata = context.metadata;
    this.model = context.model;
    this.provider = context.provider;
    this.server = context.server;
    this.texts = context.texts;
  }

  get signal(): AbortSignal {
    return this.#own.signal;
  }
}

function withSignal(context: GuardrailContext, own: CheckSignal): GuardrailContext {
  return new CheckContext(context, own);
}

const settledOf = (result: unknown): Settled =>
  isResult(result) ? { kind: 'done', result } : { kind: 'error', message: 'the check gave no verdict' };

const failed = (error: unknown): Settled => ({
  kind: 'error',
  message: error instanceof Error ? error.message : String(error),
});

const isThenable = (value: unknown): value is Promise<CheckResult> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

const isResult = (value: unknown): value is CheckResult =>
  typeof value === 'object' && value !== null && typeof (value as CheckResult).verdict === 'boolean';

function applyTransform(context: GuardrailContext, transformed: CheckResult['transformed']): GuardrailContext {
  if (!transformed) return context;
  let next = context;
  if (transformed.request !== undefined && typeof transformed.request === 'object' && transformed.request !== null)
    next = { ...next, request: { ...next.request, json: transformed.request } };
  if (
    transformed.response !== undefined &&
    typeof transformed.response === 'object' &&
    transformed.response !== null &&
    next.response?.json !== undefined
  )
    next = { ...next, response: { ...next.response, json: transformed.response } };
  return next;
}
