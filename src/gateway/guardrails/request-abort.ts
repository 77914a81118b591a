import type { LazySignal } from './request-guardrails.js';

/**
 * A guarded request's abort: aborted when the client goes away, like an AbortController, but the
 * controller and its signal are made only when a check reads the signal (a check that calls out,
 * or a test); until then whether it was aborted is only a flag.
 */
export class RequestAbort implements LazySignal {
  private controller: AbortController | null = null;
  private abortedWith: { reason: unknown } | null = null;

  get aborted(): boolean {
    return this.controller ? this.controller.signal.aborted : this.abortedWith !== null;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  abort(reason?: unknown): void {
    if (this.controller) this.controller.abort(reason);
    else this.abortedWith ??= { reason };
  }
}
