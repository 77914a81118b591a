/**
 * One check against its time limit and the request's abort: a check that answers at once is
 * done at once (no timer, no race); one that waits races a timer. Each check sees the request
 * through a derived context with its own signal, made only if the check reads it.
 */
import type { CheckResult, GuardrailContext, PreparedCheck } from './types.js';

/** setTimeout and clearTimeout, injectable so that tests decide when time is up. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** How a check ended: its result, an error it threw or gave, or its time limit. */
export type Settled = { kind: 'done'; result: CheckResult } | { kind: 'error'; message: string } | { kind: 'timeout' };

/**
 * Runs one check against its time limit; the check's signal is aborted when either ends. A
 * check that answers without waiting (most built-ins) is done at once: no timer, no race.
 */
export function settle(
  check: PreparedCheck,
  context: GuardrailContext,
  timeoutMs: number,
  timers: Timers,
  aborted: (() => boolean) | undefined,
): Settled | Promise<Settled> {
  if (aborted ? aborted() : context.signal.aborted) return { kind: 'error', message: 'the request was aborted' };
  const own = new CheckSignal(context);
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
 * request's, and when the check is over. The request's signal is read only then too: it may be
 * made on first read.
 */
class CheckSignal {
  private controller: AbortController | null = null;
  private request: AbortSignal | null = null;
  private forward: (() => void) | null = null;
  private done = false;

  constructor(private readonly context: GuardrailContext) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = (this.controller = new AbortController());
      const request = (this.request = this.context.signal);
      if (this.done) controller.abort(new Error('check finished'));
      else if (request.aborted) controller.abort(request.reason);
      else {
        this.forward = () => controller.abort(request.reason);
        request.addEventListener('abort', this.forward, { once: true });
      }
    }
    return this.controller.signal;
  }

  finish(): void {
    this.done = true;
    if (!this.controller) return;
    if (this.forward) this.request?.removeEventListener('abort', this.forward);
    if (!this.controller.signal.aborted) this.controller.abort(new Error('check finished'));
  }
}

/** The context a check sees: the runner's, with the check's own signal made on first read. */
function withSignal(context: GuardrailContext, own: CheckSignal): GuardrailContext {
  return new DerivedContext(context, context.request, context.response, own);
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

export function applyTransform(context: GuardrailContext, transformed: CheckResult['transformed']): GuardrailContext {
  if (!transformed) return context;
  let request = context.request;
  let response = context.response;
  if (transformed.request !== undefined && typeof transformed.request === 'object' && transformed.request !== null)
    request = { json: transformed.request, headers: request.headers };
  if (
    transformed.response !== undefined &&
    typeof transformed.response === 'object' &&
    transformed.response !== null &&
    response?.json !== undefined
  )
    response = { ...response, json: transformed.response };
  return request === context.request && response === context.response
    ? context
    : new DerivedContext(context, request, response, null);
}

/**
 * A context derived from another: its own bodies (as a check changed them) and, while a check
 * runs, that check's own signal; everything else is read from the one it came from. A class
 * rather than a spread (which would lose what that one makes on first read, as the gateway's
 * signal and headers) or a copy with a getter defined on it (which cost more than most checks).
 */
class DerivedContext implements GuardrailContext {
  constructor(
    private readonly base: GuardrailContext,
    readonly request: GuardrailContext['request'],
    readonly response: GuardrailContext['response'],
    private readonly own: CheckSignal | null,
  ) {}

  get hook() {
    return this.base.hook;
  }
  get endpoint() {
    return this.base.endpoint;
  }
  get metadata() {
    return this.base.metadata;
  }
  get model() {
    return this.base.model;
  }
  get provider() {
    return this.base.provider;
  }
  get signal(): AbortSignal {
    return this.own ? this.own.signal : this.base.signal;
  }
  get server() {
    return this.base.server;
  }
  get texts() {
    return this.base.texts;
  }
}
